/**
 * The real process as a CLI io (../io.ts): the one adapter in src/cli that touches `process`.
 * bin/yiem.js builds it, passes it to `main`, and exits with the code `main` returns.
 */
import { EventEmitter } from "node:events";
import { fstatSync } from "node:fs";
import type { CliHost, CliIo, CliSignal } from "../io.js";
import { exitProcess } from "../../channels/guard.js";
import { onEventLoopDrained } from "./drain.js";
import { watchParent } from "./parent-watch.js";
import { exitFromWatchdog, exitSkippingListeners, startWatchdog } from "./watchdog.js";

const FORWARDED: readonly CliSignal[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];

/** The io of this process: its streams, environment, folder, signals and exit. */
export function processIo(): CliIo {
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
    stdin: process.stdin,
    get stdinKind() {
      return stdinKind();
    },
    stdout: process.stdout,
    stderr: process.stderr,
    isTTY: { stdin: process.stdin.isTTY === true, stdout: process.stdout.isTTY === true, stderr: process.stderr.isTTY === true },
    env: process.env,
    cwd: process.cwd(),
    signals,
    host: processHost(),
  };
}

function processHost(): CliHost {
  return {
    exitNow: (code) => exitProcess(code),
    exitFromWatchdog,
    onEventLoopDrained,
    onExit(callback) {
      process.once("exit", callback);
      return () => process.removeListener("exit", callback);
    },
    watchParent: (onGone) => watchParent(onGone),
    startWatchdog,
    releasesChannels: false,
    armExitBound: (code, graceMs) => void startWatchdog(Date.now(), () => exitSkippingListeners(code), graceMs),
  };
}

/** fd 0 as ../io.ts describes it. */
function stdinKind(): CliIo["stdinKind"] {
  try {
    const stats = fstatSync(0);
    if (stats.isFIFO() || stats.isFile() || stats.isSocket()) return "readable";
    return stats.isCharacterDevice() && process.stdin.isTTY === true ? "terminal" : "none";
  } catch {
    return "none";
  }
}
