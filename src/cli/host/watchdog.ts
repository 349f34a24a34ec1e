/**
 * The run deadline for synchronous code that never yields (`execute() { while (true) {} }`): the
 * main thread's timer cannot fire while such code runs, so a worker thread watches the clock.
 *
 * Rules:
 * - Started only for a run with a timeout that may run tool or hook modules (run.ts); the worker
 *   sleeps on a shared flag until the deadline plus GRACE_MS and costs nothing meanwhile.
 * - `disarm()` (the run is over: the loop returned) wakes it and it ends. The deadline timer
 *   firing does not disarm it: the abort it starts runs tools' abort listeners, which may be
 *   what never returns.
 * - Past the deadline plus the grace, still armed, the main thread is stuck in synchronous code.
 *   The worker then asks V8, through an inspector session on the main thread, to call `onStuck`
 *   on the main thread in the middle of that code (`Runtime.evaluate` runs between two
 *   statements of the stuck code). `onStuck` ends the run itself and must exit the process:
 *   the stuck code never resumes. See `exitFromWatchdog`.
 * - Without an inspector (a Node built without one), the worker does nothing: the limit is not
 *   enforced for code that never yields (docs/reliability.md).
 * - Code stuck inside one blocking system call (a synchronous read of a pipe that never ends,
 *   Atomics.wait) is not interrupted: V8 only runs the request between JavaScript statements.
 */
import { closeSync, openSync } from "node:fs";
import { randomBytes } from "node:crypto";
import type { Worker } from "node:worker_threads";
import { exitProcess } from "../../channels/guard.js";
import type { Watchdog } from "../io.js";

/** How long past the deadline the main thread has to handle it itself. */
const GRACE_MS = 1000;

const WORKER_SOURCE = `
const { workerData } = require("node:worker_threads");
const flag = new Int32Array(workerData.shared);
for (;;) {
  const left = workerData.at - Date.now();
  if (left <= 0 || Atomics.load(flag, 0) !== 0) break;
  Atomics.wait(flag, 0, 0, left);
}
if (Atomics.load(flag, 0) === 0) {
  try {
    const { Session } = require("node:inspector");
    const session = new Session();
    session.connectToMainThread();
    session.post("Runtime.evaluate", { expression: "globalThis[" + JSON.stringify(workerData.key) + "]()" }, () => {});
  } catch {}
}
`;

/**
 * Arms a watchdog for `deadlineAt` (a `Date.now()` time); `onStuck` runs on the main thread when
 * it is still armed `graceMs` later.
 */
export function startWatchdog(deadlineAt: number, onStuck: () => void, graceMs = GRACE_MS): Watchdog {
  const shared = new SharedArrayBuffer(4);
  const flag = new Int32Array(shared);
  const key = `__yiemWatchdog_${randomBytes(8).toString("hex")}`;
  Object.defineProperty(globalThis, key, {
    configurable: true,
    value: () => {
      if (Atomics.load(flag, 0) !== 0) return;
      Atomics.store(flag, 0, 1);
      onStuck();
    },
  });
  let worker: Worker | undefined;
  try {
    // Loaded here, not at start-up: every command's start would compile worker_threads and its
    // ~6 internal modules for the one run in many that arms a watchdog (docs/performance.md).
    const { Worker } = process.getBuiltinModule("node:worker_threads");
    worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { shared, at: deadlineAt + graceMs, key } });
    worker.unref();
    worker.on("error", () => {});
  } catch {
    // no worker threads: the limit is not enforced for code that never yields
  }
  return {
    disarm() {
      if (Atomics.load(flag, 0) !== 0) return;
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
      void worker?.terminate().catch(() => {});
    },
  };
}

/**
 * Exits with `code` from inside `onStuck`. The 'exit' listeners registered before this one still
 * run first (the event writer writes what it holds, child process groups are killed). Then
 * stderr is pointed at /dev/null: Node prints "Waiting for the debugger to disconnect..." when it
 * exits with the watchdog's inspector session connected, and stderr must stay pure events.
 */
export function exitFromWatchdog(code: number): never {
  process.once("exit", () => {
    try {
      closeSync(2);
      openSync("/dev/null", "w");
    } catch {
      // nothing more will be written by yiem
    }
  });
  exitProcess(code);
}

/**
 * Exits with `code` at once, running no more 'exit' listeners (one of them may be what never
 * returns): for the bound on the exit itself (../bounded-exit.ts). Node prints a note about the
 * watchdog's inspector session on the way out, so stderr is pointed at /dev/null first.
 */
export function exitSkippingListeners(code: number): never {
  try {
    closeSync(2);
    openSync("/dev/null", "w");
  } catch {
    // exiting anyway
  }
  const reallyExit = (process as unknown as { reallyExit?: (code: number) => never }).reallyExit;
  if (typeof reallyExit === "function") reallyExit.call(process, code);
  return exitProcess(code);
}
