/**
 * The real process as a CLI io (../io.ts): the one adapter in src/cli that touches `process`.
 * bin/yiem.js builds it, passes it to `main`, and exits with the code `main` returns.
 */
import { EventEmitter } from "node:events";
import { fstatSync, statSync, type Stats } from "node:fs";
import type { CliHost, CliIo, CliSignal } from "../io.js";
import { exitProcess } from "../../channels/guard.js";
import { builtStream } from "../../channels/process-streams.js";
import { onEventLoopDrained } from "./drain.js";
import { fdOutput } from "./fd-output.js";
import { watchParent } from "./parent-watch.js";
import { exitFromWatchdog, exitSkippingListeners, startWatchdog, watchdogNow, watchThreadStarted } from "./watchdog.js";
import { exitPathReplaced, foreignExitListeners, onProcessExit, pinExitCode, pinnedExitCode } from "../../exit-listeners.js";
import { exitGraceMs } from "../bounded-exit.js";

/** Taken before any tool or hook module loads (the exit bound's last step must be yiem's own). */
const setImmediateAsLoaded = setImmediate;

const FORWARDED: readonly CliSignal[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];

/** The io of this process: its streams, environment, folder, signals and exit. */
export function processIo(): CliIo {
  // A stream Node built already (untracked: as if built) is written through (./fd-output.ts).
  const stdout = fdOutput(1, () => process.stdout, () => isTerminal(1), () => builtStream("stdout") !== null);
  const stderr = fdOutput(2, () => process.stderr, () => isTerminal(2), () => builtStream("stderr") !== null);
  const signals = new EventEmitter();
  // A process signal is handled only once a command listens for it (its default action ends
  // the process otherwise); once installed, the handler stays until the process exits.
  const wired = new Set<string>();
  signals.on("newListener", (name: string | symbol) => {
    if (typeof name !== "string" || wired.has(name) || !(FORWARDED as readonly string[]).includes(name)) return;
    wired.add(name);
    process.on(name as CliSignal, (received: NodeJS.Signals) => signals.emit(name, received));
  });
  return {
    // process.stdin is built on first use only: for a file or /dev/null it is a file stream, and
    // building one loads ~10 of Node's modules (fs/promises, readline, watchers) that most
    // commands never need (docs/performance.md).
    get stdin() {
      return process.stdin;
    },
    get stdinKind() {
      return stdinKind();
    },
    // stdout and stderr are written straight to their descriptors until something needs the
    // streams (./fd-output.ts): building them loads ~40 of Node's modules.
    stdout,
    stderr,
    isTTY: {
      get stdin() {
        return isTerminal(0);
      },
      get stdout() {
        return stdout.isTTY === true;
      },
      get stderr() {
        return stderr.isTTY === true;
      },
    },
    env: process.env,
    cwd: process.cwd(),
    signals,
    host: processHost(),
  };
}

/** The exit bound of this process (../bounded-exit.ts `armExitBound`). */
function armBound(code: number, graceMs: number, exitFollows: boolean): void {
  // The code pinned last when it fires: a later exit of yiem's own (a second signal) re-pins it,
  // and the earliest bound armed is the one that fires.
  const arm = () => void startWatchdog(watchdogNow(), () => exitSkippingListeners(pinnedExitCode(code)), graceMs);
  const onlyYiemsCode = exitFollows && !watchThreadStarted() && foreignExitListeners() === 0 && !exitPathReplaced();
  // The code is the command's, whatever an exit listener sets (../../exit-listeners.ts).
  pinExitCode(code);
  if (!onlyYiemsCode) return arm();
  // Only yiem's code runs before the exit (../bounded-exit.ts): no thread to boot. Should
  // the event loop turn after all, the bound is armed then.
  setImmediateAsLoaded(arm).unref();
}

function processHost(): CliHost {
  return {
    // An exit from outside a command's end (a second signal, a drained event loop, a tool's
    // uncaught error) is bounded too: tool code may run on the way out (../bounded-exit.ts).
    exitNow: (code) => {
      armBound(code, 2 * exitGraceMs(process.env), true);
      exitProcess(code);
    },
    exitFromWatchdog,
    onEventLoopDrained,
    onExit: (callback) => onProcessExit(callback),
    watchParent: (onGone) => watchParent(onGone),
    startWatchdog,
    releasesChannels: false,
    armExitBound: armBound,
  };
}

/** fd 0 as ../io.ts describes it. */
function stdinKind(): CliIo["stdinKind"] {
  try {
    const stats = fstatSync(0);
    if (stats.isFIFO() || stats.isFile() || stats.isSocket()) return "readable";
    return deviceIsTerminal(0, stats) ? "terminal" : "none";
  } catch {
    return "none";
  }
}

/**
 * Whether `fd` is a terminal, as its stream's `isTTY` would say, without building the stream
 * (process.stdin, stdout, stderr): only a character device can be one, so a pipe or file is told
 * without node:tty (which loads net and the stream modules).
 */
function isTerminal(fd: 0 | 1 | 2): boolean {
  try {
    return deviceIsTerminal(fd, fstatSync(fd));
  } catch {
    return false;
  }
}

/**
 * Whether `fd` (of `stats`) is a terminal. /dev/null, the character device a script's or a
 * scheduler's stdin most often is, is told by its device number without node:tty.
 */
function deviceIsTerminal(fd: 0 | 1 | 2, stats: Stats): boolean {
  if (!stats.isCharacterDevice()) return false;
  if (stats.rdev === devNullNumber()) return false;
  return isatty(fd);
}

let devNull: number | null | undefined;

/** /dev/null's device number, or null when it cannot be read (then node:tty decides). */
function devNullNumber(): number | null {
  if (devNull === undefined) {
    try {
      const stats = statSync("/dev/null");
      devNull = stats.isCharacterDevice() ? stats.rdev : null;
    } catch {
      devNull = null;
    }
  }
  return devNull;
}

function isatty(fd: 0 | 1 | 2): boolean {
  return (process.getBuiltinModule("node:tty") as typeof import("node:tty")).isatty(fd);
}
