/**
 * The process's stdout and stderr as the CLI io's outputs, without building Node's streams before
 * something needs them: `process.stdout` on a pipe loads net, tty and the stream modules, ~40 of
 * Node's modules and ~5 ms of every start (docs/performance.md, "Eleventh pass"). Rules:
 * - `write` goes to the file descriptor itself (`fs.writeSync`) while the real stream
 *   (`process.stdout` / `process.stderr`) has not been built through this output, when that can
 *   never block: a regular file or a character device that is no terminal (/dev/null) is
 *   written as it is; a pipe through a non-blocking descriptor of its own (Linux:
 *   `/proc/self/fd/N` opened O_NONBLOCK, a new open file, so the flags of the one the process
 *   shares with its parent stay as they are). A reader that stopped reading then fills the pipe
 *   and the rest goes to the real stream (below), which never blocks the process: its exit bound
 *   still ends it. A Unix socket (what a Node.js parent's "pipe" is; its descriptor blocks)
 *   takes one direct write of at most SOCKET_WRITE_MAX bytes, on Linux: one packet, which the
 *   kernel takes into a send buffer of any size that holds less than itself (nothing but yiem
 *   writes there: tool output is captured; at most stdout's and stderr's first write when they
 *   share it); every later write goes to the real stream. Anything else (a terminal, no /proc),
 *   and any output whose real stream Node built already (`builtElsewhere`: a warning printed,
 *   its queue perhaps not drained), uses the real stream.
 *   The callback runs on the next tick, as a stream's would, and `write` returns true (taken whole);
 * - a write the descriptor does not take whole (EAGAIN: a non-blocking pipe that is full; EPIPE:
 *   the reader is gone; EBADF: no such descriptor) hands its unwritten rest, and every later
 *   write, to the real stream, which then does what Node does (waits, reports EPIPE, discards
 *   writes to a closed descriptor): nothing is lost, reordered or reported differently;
 * - listeners (`on`, `once`, `off`) are kept until the real stream is built, then added to it;
 * - anything else (`end`, `columns`, `_handle`, …) builds the real stream and goes to it; so does
 *   every write from then on, and every write to a terminal;
 * - `isTTY` is answered without the stream (a descriptor that is no character device is no
 *   terminal; only a character device is asked `tty.isatty`), `fd` is the descriptor.
 */
import { closeSync, constants, fstatSync, openSync, writeSync, type Stats } from "node:fs";
import type { CliOutput } from "../io.js";

type Listener = (...args: unknown[]) => void;

/**
 * The output on descriptor `fd`; `real()` builds the process stream of it; `isTerminal()` is asked
 * at most once; `builtElsewhere()` tells whether Node built that stream already (rules above).
 */
export function fdOutput(fd: number, real: () => CliOutput, isTerminal: () => boolean, builtElsewhere: () => boolean = () => false): CliOutput {
  let stream: CliOutput | null = null;
  let terminal: boolean | undefined;
  const listeners: Array<{ event: string | symbol; fn: Listener; once: boolean }> = [];
  const isTTY = () => (terminal ??= isTerminal());
  /** Where `write` writes directly, and how much more it may; null: the real stream (rules above). */
  let direct: Direct | null | undefined;

  const built = (): CliOutput => {
    if (stream === null) {
      stream = real();
      for (const { event, fn, once } of listeners.splice(0)) {
        if (once) stream.once(event, fn);
        else stream.on(event, fn);
      }
    }
    return stream;
  };

  const write = (chunk: string | Uint8Array, encoding?: unknown, callback?: unknown): boolean => {
    const done = (typeof encoding === "function" ? encoding : callback) as ((error?: Error | null) => void) | undefined;
    const toStream = () => (built().write as (...args: unknown[]) => boolean)(chunk, encoding, callback);
    if (stream !== null || builtElsewhere()) direct = null;
    else direct ??= directDescriptor(fd, isTTY);
    if (!direct || direct.writes < 1) return toStream();
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8") : chunk;
    if (bytes.length > direct.budget) return toStream();
    direct.budget -= bytes.length;
    direct.writes -= 1;
    let written = 0;
    try {
      while (written < bytes.length) written += writeSync(direct.fd, bytes, written);
    } catch {
      return built().write(bytes.subarray(written), done);
    }
    if (done) process.nextTick(done);
    return true;
  };

  const listen = (once: boolean) =>
    function (this: unknown, event: string | symbol, fn: Listener) {
      if (stream !== null) (once ? stream.once(event, fn) : stream.on(event, fn));
      else listeners.push({ event, fn, once });
      return output;
    };
  const unlisten = function (this: unknown, event: string | symbol, fn: Listener) {
    if (stream !== null) stream.removeListener(event, fn);
    else {
      const at = listeners.findIndex((entry) => entry.event === event && entry.fn === fn);
      if (at >= 0) listeners.splice(at, 1);
    }
    return output;
  };
  const own: Record<string | symbol, unknown> = {
    write,
    on: listen(false),
    addListener: listen(false),
    once: listen(true),
    off: unlisten,
    removeListener: unlisten,
  };

  const output: CliOutput = new Proxy({} as CliOutput, {
    get(_target, key) {
      if (key === "isTTY") return stream !== null ? stream.isTTY : isTTY();
      if (key === "fd") return fd;
      if (key in own) return own[key];
      const target = built() as unknown as Record<string | symbol, unknown>;
      const value = target[key];
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
    set(_target, key, value) {
      (built() as unknown as Record<string | symbol, unknown>)[key] = value;
      return true;
    },
    has(_target, key) {
      return key in own || key === "isTTY" || key === "fd" || key in built();
    },
  });
  return output;
}

/**
 * The one direct write a Unix socket takes (rules above): one packet even in Linux's smallest send
 * buffer (SOCK_MIN_SNDBUF ~4.5 KB; a stream socket's packets are at most half of it), so it is
 * taken at once into a buffer holding less than that.
 */
export const SOCKET_WRITE_MAX = 2048;

interface Direct {
  fd: number;
  /** Bytes it may still take directly. */
  budget: number;
  /** Writes it may still take directly. */
  writes: number;
}

/** A non-blocking descriptor of the pipe on `fd` (its /proc entry opened again), when it is that very pipe. */
function ownPipeDescriptor(fd: number, stats: Stats): Direct | null {
  const own = openSync(`/proc/self/fd/${fd}`, constants.O_WRONLY | constants.O_NONBLOCK);
  const opened = fstatSync(own);
  if (opened.dev === stats.dev && opened.ino === stats.ino) return { fd: own, budget: Infinity, writes: Infinity };
  closeSync(own); // not the same pipe (an odd /proc): the real stream
  return null;
}

/** Where `fd`'s writes can go without ever blocking (rules above): itself, a non-blocking descriptor of its pipe, or null. */
function directDescriptor(fd: number, isTTY: () => boolean): Direct | null {
  try {
    const stats = fstatSync(fd);
    if (stats.isFile() || (stats.isCharacterDevice() && !isTTY())) return { fd, budget: Infinity, writes: Infinity };
    if (process.platform !== "linux") return null;
    if (stats.isFIFO()) return ownPipeDescriptor(fd, stats);
    if (stats.isSocket()) return { fd, budget: SOCKET_WRITE_MAX, writes: 1 };
  } catch {
    // no such descriptor, no /proc, no reader: the real stream says what Node says
  }
  return null;
}
