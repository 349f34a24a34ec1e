/** A writable stream that keeps what it receives, for the event sink and output tests. */
import { Writable } from "node:stream";

export interface CaptureOptions {
  /** Acts as a terminal (`isTTY`), optionally `columns` wide. */
  isTTY?: boolean;
  columns?: number;
  /** Slow reader: a tiny buffer and an asynchronous callback, so writers meet backpressure. */
  slow?: boolean;
}

export function captureStream(options: CaptureOptions = {}) {
  const chunks: string[] = [];
  const stream = new Writable({
    highWaterMark: options.slow ? 256 : 16 * 1024,
    write(chunk: Buffer, _enc, callback) {
      chunks.push(chunk.toString("utf8"));
      if (options.slow) setImmediate(callback);
      else callback();
    },
  });
  if (options.isTTY) Object.assign(stream, { isTTY: true, ...(options.columns !== undefined ? { columns: options.columns } : {}) });
  return { stream, text: () => chunks.join(""), writes: () => chunks.length };
}
