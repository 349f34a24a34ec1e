/**
 * The guard of yiem's own channels (stdout: the answer; stderr: the events) against code yiem
 * runs for a tool or hook, and against that code ending or crashing the process. One guard per
 * process, installed by a command before any tool or hook code loads (`yiem run`, `yiem tools …`,
 * `yiem mcp serve`, whose stdio channel writes stdout through `ownWrite`). Rules (docs/reliability.md, "Faults from tools"):
 * - every write to `process.stdout` or `process.stderr` (console.log, console.error, a direct
 *   `write`) is captured, unless yiem makes it through `ownWrite`: nothing of it reaches stdout or
 *   stderr. It is cut into lines (a line over MAX_LINE_CHARS is cut with a marker) and handed to
 *   `onOutput`; past MAX_CAPTURED_CHARS per process the rest is dropped, said once;
 * - `process.exit()` (also `process.exitCode` left for the end) from that code does not end the
 *   process: it throws an Error naming the call where it was made, so a tool's call fails (an
 *   error result) and the run goes on. yiem itself exits through `exitProcess`;
 * - a throw nobody catches (in a timer) and a rejection nobody handles (a floating promise) go to
 *   `onUncaught` instead of crashing the process with a raw stack trace;
 * - writes to the file descriptors themselves (`fs.writeSync(1, …)`), `process.kill`,
 *   `process.abort()` and native code are not guarded.
 */

import { builtStream, onStreamBuilt } from "./process-streams.js";
import { repinExitCode } from "../exit-listeners.js";

/** One line tool or hook code wrote. */
export interface CapturedOutput {
  stream: "stdout" | "stderr";
  /** The line, without its line break. */
  text: string;
}

export interface GuardOptions {
  /** Every captured line (see rules); must not throw. */
  onOutput(output: CapturedOutput): void;
  /** A throw or rejection no code handled; must not throw. */
  onUncaught(error: unknown, kind: "exception" | "rejection"): void;
}

export interface ChannelGuard {
  /** Hands on a line still without its line break; the guard stays installed. */
  flush(): void;
  /** Puts everything back as it was (for tests and embedders). */
  release(): void;
}

/** A captured line is cut past this many characters. */
export const MAX_LINE_CHARS = 4_000;
/** Captured text beyond this many characters per process is dropped (one line says so). */
export const MAX_CAPTURED_CHARS = 1_000_000;

const realExit = process.exit.bind(process);
let ownDepth = 0;
let active: ChannelGuard | null = null;

/** Runs `write` as yiem's own write to stdout or stderr: it reaches the stream, guarded or not. */
export function ownWrite<T>(write: () => T): T {
  ownDepth++;
  try {
    return write();
  } finally {
    ownDepth--;
  }
}

/** Ends the process with `code`: yiem's one way to exit while the guard may be installed. */
export function exitProcess(code: number): never {
  // yiem's own code decides: a code pinned at the end of a command gives way (../exit-listeners.ts).
  repinExitCode(code);
  return realExit(code);
}

/** Releases the installed guard, if any (an in-process CLI call hands the process back; see cli/io.ts). */
export function releaseChannels(): void {
  active?.release();
}

/** Error thrown where tool or hook code called `process.exit`. */
export class ExitCalledError extends Error {
  constructor(readonly code: unknown) {
    super(`tool or hook code called process.exit(${code === undefined ? "" : String(code)}); yiem does not let it end the process`);
    this.name = "ExitCalledError";
  }
}

type Write = (chunk: unknown, encoding?: unknown, callback?: unknown) => boolean;

/** Installs the guard (rules above); a second call returns the installed one. */
export function guardChannels(options: GuardOptions): ChannelGuard {
  if (active) return active;
  let captured = 0;
  let droppedSaid = false;
  const deliver = (stream: CapturedOutput["stream"], text: string) => {
    if (captured >= MAX_CAPTURED_CHARS) {
      if (!droppedSaid) {
        droppedSaid = true;
        safely(() => options.onOutput({ stream, text: `[… more output of tool or hook code not shown: over ${MAX_CAPTURED_CHARS} characters]` }));
      }
      return;
    }
    captured += text.length;
    const cut = text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)} [… line cut: ${text.length - MAX_LINE_CHARS} more characters]` : text;
    safely(() => options.onOutput({ stream, text: cut }));
  };
  const pending: Record<CapturedOutput["stream"], string> = { stdout: "", stderr: "" };
  const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  const take = (stream: CapturedOutput["stream"], chunk: unknown, encoding: unknown) => {
    let text: string;
    if (typeof chunk === "string") text = typeof encoding === "string" && encoding !== "utf8" && encoding !== "utf-8" ? Buffer.from(chunk, encoding as BufferEncoding).toString("utf8") : chunk;
    else if (chunk instanceof Uint8Array) text = decoders[stream].decode(chunk, { stream: true });
    else text = String(chunk);
    let lines = pending[stream] + text;
    let end = lines.indexOf("\n");
    while (end >= 0) {
      deliver(stream, lines.slice(0, end).replace(/\r$/, ""));
      lines = lines.slice(end + 1);
      end = lines.indexOf("\n");
    }
    // A line with no end yet is held, but never grows past the cut.
    if (lines.length > MAX_LINE_CHARS) {
      deliver(stream, lines);
      lines = "";
    }
    pending[stream] = lines;
  };
  const flush = () => {
    for (const stream of ["stdout", "stderr"] as const) {
      if (pending[stream] === "") continue;
      const text = pending[stream];
      pending[stream] = "";
      deliver(stream, text);
    }
  };

  const restore: Array<() => void> = [];
  const patch = (name: CapturedOutput["stream"], target: NodeJS.WriteStream) => {
    const own = Object.getOwnPropertyDescriptor(target, "write");
    const original = target.write as unknown as Write;
    const guarded: Write = function (this: unknown, chunk, encoding, callback) {
      if (ownDepth > 0) return original.call(this, chunk, encoding, callback);
      take(name, chunk, typeof encoding === "function" ? undefined : encoding);
      const done = typeof encoding === "function" ? encoding : callback;
      if (typeof done === "function") process.nextTick(done as () => void);
      return true;
    };
    Object.defineProperty(target, "write", { configurable: true, writable: true, value: guarded });
    restore.push(() => {
      if (own) Object.defineProperty(target, "write", own);
      else delete (target as unknown as Record<string, unknown>).write;
    });
  };
  for (const name of ["stdout", "stderr"] as const) {
    // A stream Node has not built yet (./process-streams.ts) is guarded when it is built: building
    // it here would cost every start Node's stream modules. Untracked: built and guarded now.
    const built = builtStream(name);
    if (built === undefined) patch(name, process[name]);
    else if (built !== null) patch(name, built);
    else restore.push(onStreamBuilt(name, (stream) => patch(name, stream)));
  }

  const exitBefore = Object.getOwnPropertyDescriptor(process, "exit");
  Object.defineProperty(process, "exit", {
    configurable: true,
    writable: true,
    value: (code?: unknown) => {
      throw new ExitCalledError(code);
    },
  });
  restore.push(() => {
    if (exitBefore) Object.defineProperty(process, "exit", exitBefore);
  });

  const onException = (error: unknown) => safely(() => options.onUncaught(error, "exception"));
  const onRejection = (reason: unknown) => safely(() => options.onUncaught(reason, "rejection"));
  process.on("uncaughtException", onException);
  process.on("unhandledRejection", onRejection);
  restore.push(() => {
    process.off("uncaughtException", onException);
    process.off("unhandledRejection", onRejection);
  });

  const guard: ChannelGuard = {
    flush,
    release() {
      flush();
      for (const undo of restore.reverse()) undo();
      if (active === guard) active = null;
    },
  };
  active = guard;
  return guard;
}

function safely(work: () => void): void {
  try {
    work();
  } catch {
    // a broken consumer must not break the guard
  }
}
