/**
 * A writer that hands whole chunks to a stream and never drops one.
 *
 * Rules:
 * - Each `write` is one whole chunk (e.g. one NDJSON line), so lines are never torn apart.
 * - While the stream signals backpressure (`write` returned false), chunks are queued in memory
 *   and handed over joined, as one write, on `drain`: buffering, never dropping.
 * - `flush()` resolves once every chunk has been accepted by the stream and its write callback
 *   has fired (so a file stream has the bytes), or at once if the stream has failed.
 * - A stream error (e.g. EPIPE when the reader went away) or a closed stream is absorbed: later
 *   chunks are discarded quietly, because there is nowhere left to write them. It never throws.
 * - The stream is never ended; its owner ends it.
 */

export interface ChunkWriter {
  write(chunk: string): void;
  flush(): Promise<void>;
  /** True once the stream has failed; nothing more is written. */
  readonly failed: boolean;
}

export function createChunkWriter(stream: NodeJS.WritableStream): ChunkWriter {
  let queued: string[] = [];
  let waitingForDrain = false;
  let inFlight = 0;
  let failed = false;
  let flushWaiters: Array<() => void> = [];

  const settle = (): void => {
    if (flushWaiters.length === 0) return;
    if (!failed && (waitingForDrain || inFlight > 0)) return;
    const waiters = flushWaiters;
    flushWaiters = [];
    for (const resolve of waiters) resolve();
  };
  const fail = (): void => {
    failed = true;
    queued = [];
    waitingForDrain = false;
    settle();
  };
  const onWritten = (error?: Error | null): void => {
    inFlight--;
    if (error) fail();
    else settle();
  };
  const onDrain = (): void => {
    waitingForDrain = false;
    if (queued.length > 0) {
      const chunk = queued.length === 1 ? queued[0] : queued.join("");
      queued = [];
      push(chunk);
    }
    settle();
  };
  const push = (chunk: string): void => {
    inFlight++;
    let accepted: boolean;
    try {
      accepted = stream.write(chunk, onWritten);
    } catch {
      inFlight--;
      fail();
      return;
    }
    if (!accepted && !failed) {
      waitingForDrain = true;
      stream.once("drain", onDrain);
    }
  };

  stream.on("error", fail);
  // A stream closed under us (destroyed, or ended by its owner) will never drain again.
  stream.once("close", fail);

  return {
    write(chunk) {
      if (failed) return;
      if (waitingForDrain) queued.push(chunk);
      else push(chunk);
    },
    flush() {
      if (failed || (!waitingForDrain && inFlight === 0)) return Promise.resolve();
      return new Promise((resolve) => flushWaiters.push(resolve));
    },
    get failed() {
      return failed;
    },
  };
}
