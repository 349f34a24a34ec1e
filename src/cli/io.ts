/**
 * What a CLI call talks to: its streams, environment, folder, signals and the process around it.
 * `main(argv, io)` (./main.ts) reads and writes only through `io`, so the same code runs as the
 * real `yiem` process (./host/process-io.ts builds that io; bin/yiem.js is the only caller) and
 * in-process, many times over, from tests and embedders (test/support/cli-in-process.ts).
 *
 * Rules:
 * - Nothing in src/cli touches `process.stdout`, `process.stderr`, `process.stdin`,
 *   `process.env`, `process.cwd()`, `process.exit` or `process.on` outside ./host/.
 * - `stdout` gets only the result printer's writes (./output.ts), `stderr` only the event sink's
 *   (./events/sink.ts) and the usage-error line (./errors.ts).
 * - `signals` emits `SIGINT`, `SIGTERM`, `SIGHUP` and `SIGQUIT` (the name as the one argument).
 *   The real io forwards a process signal only while a command listens for it, so a command
 *   without handlers keeps the default action (the process ends).
 * - `host` is what only a whole process has: ending at once, noticing a drained event loop, the
 *   last synchronous writes at exit, a parent that went away, a watchdog for code that never
 *   yields. An in-process host (`inProcessHost`) has none of these: those behaviours are tested
 *   against the real binary (test/e2e/).
 */
import { EventEmitter } from "node:events";

/** The signals that end a command's run (./signals.ts). */
export type CliSignal = "SIGINT" | "SIGTERM" | "SIGHUP" | "SIGQUIT";

/** An output stream; `isTTY` and `columns` as on a process stream. */
export type CliOutput = NodeJS.WritableStream & { isTTY?: boolean; columns?: number; fd?: number };

/** The input stream. */
export type CliInput = NodeJS.ReadableStream & { isTTY?: boolean; unref?: () => void; destroy?: () => void };

/** A watchdog for code that never yields (./host/watchdog.ts). */
export interface Watchdog {
  disarm(): void;
}

/** What only a whole process has (see module rules). */
export interface CliHost {
  /**
   * Ends the program now with `code` (a second signal, stuck code, a drained event loop). The
   * real host exits the process; an in-process host ends the call with that code, leaving the
   * abandoned work behind. Callers return right after it.
   */
  exitNow(code: number): void;
  /** `callback` when the event loop has nothing left to wait for (./host/drain.ts); returns the unregister. */
  onEventLoopDrained(callback: () => void): () => void;
  /** `callback` synchronously as the process exits (last writes); returns the unregister. */
  onExit(callback: () => void): () => void;
  /** `onGone(pid)` once the parent process is gone (./host/parent-watch.ts); returns the stop. */
  watchParent(onGone: (parentPid: number) => void): () => void;
  /** Arms a watchdog for `deadlineAt` (a `Date.now()` time) + `graceMs` (./host/watchdog.ts). */
  startWatchdog(deadlineAt: number, onStuck: () => void, graceMs?: number): Watchdog;
  /** Exits with `code` from inside a watchdog's `onStuck` (stderr kept pure events). */
  exitFromWatchdog(code: number): void;
  /**
   * True for an in-process host: when the call ends, the channel guard a command installed
   * (../channels/guard.ts) is released. The real process keeps it until it exits, so tool code's
   * last writes (in an 'exit' listener) stay off the channels.
   */
  releasesChannels: boolean;
  /**
   * From now on the process ends with `code` within `graceMs`, whatever holds it (./bounded-exit.ts).
   * `exitFollows`: the events are written and the exit follows in this turn of the event loop,
   * so only 'exit' listeners that are not yiem's could hold it.
   */
  armExitBound(code: number, graceMs: number, exitFollows: boolean): void;
}

/** Everything a CLI call reads and writes (see module rules). */
export interface CliIo {
  stdin: CliInput;
  /** What stdin is: a pipe, file or socket (`readable`), a terminal, or nothing to read (closed, /dev/null). */
  stdinKind: "readable" | "terminal" | "none";
  stdout: CliOutput;
  stderr: CliOutput;
  /** Whether each stream is a terminal (the same as the streams' own `isTTY`). */
  isTTY: { stdin: boolean; stdout: boolean; stderr: boolean };
  env: NodeJS.ProcessEnv;
  /** The folder relative paths resolve against. */
  cwd: string;
  /** Emits the CliSignal names (see module rules). */
  signals: EventEmitter;
  host: CliHost;
}

/** A host for in-process calls: `exitNow` reports the code to `onExit`; the rest does nothing. */
export function inProcessHost(onExitNow: (code: number) => void = () => {}): CliHost {
  const none = () => () => {};
  return {
    exitNow: onExitNow,
    exitFromWatchdog: onExitNow,
    onEventLoopDrained: none,
    onExit: none,
    watchParent: none,
    startWatchdog: () => ({ disarm() {} }),
    armExitBound() {},
    releasesChannels: true,
  };
}
