/**
 * The run deadline for synchronous code that never yields (`execute() { while (true) {} }`): the
 * main thread's timer cannot fire while such code runs, so a worker thread watches the clock.
 *
 * Rules:
 * - One watch thread per process, shared by every watchdog armed in it (the run deadline's and
 *   the exit bound's, ../bounded-exit.ts): a thread is a Node bootstrap of its own, and the exit
 *   bound is armed as the process is about to end, when a thread starting then would only hold
 *   up the exit. The first watchdog starts it; disarming the last one parks it (not ended), so
 *   the exit bound of a run that had a watchdog reuses the booted thread. (Starting it parked
 *   at the start of every run, for the exit bound, was measured and not kept: the thread boots
 *   for nothing in most runs, docs/performance.md.) It sleeps on a shared word until the
 *   earliest armed deadline and costs nothing meanwhile; it is unref'd, so it never keeps the
 *   process alive.
 * - A watchdog is started only for a run with a timeout that may run tool or hook modules
 *   (run.ts). `disarm()` (the run is over: the loop returned) takes it off the thread. The
 *   deadline timer firing does not disarm it: the abort it starts runs tools' abort listeners,
 *   which may be what never returns.
 * - Past a watchdog's deadline plus its grace, still armed, the main thread is stuck in
 *   synchronous code. The thread then asks V8, through an inspector session on the main
 *   thread, to call the watchdogs' check on the main thread in the middle of that code
 *   (`Runtime.evaluate` runs between two statements of the stuck code); the check runs the
 *   `onStuck` of the earliest watchdog that is due. `onStuck` ends the run itself and must exit
 *   the process: the stuck code never resumes. See `exitFromWatchdog`.
 * - Without an inspector (a Node built without one), the thread does nothing: the limit is not
 *   enforced for code that never yields (docs/reliability.md).
 * - Code stuck inside one blocking system call (a synchronous read of a pipe that never ends,
 *   Atomics.wait) is not interrupted: V8 only runs the request between JavaScript statements.
 */
import { closeSync as closeFd, openSync as openFile } from "node:fs";
import { randomHex } from "../../random-id.js";
import { exitProcess } from "../../channels/guard.js";
import type { Watchdog } from "../io.js";
import { exitPathReplaced, foreignExitListeners, reallyExitNow, runOwnExitListeners } from "../../exit-listeners.js";

// Taken as this module is evaluated, before any tool or hook module loads: a tool that wraps
// `Date.now` or `fs.closeSync` cannot move a deadline out of reach or hold the exit in them.
const closeSync = closeFd;
const openSync = openFile;
/** The clock every watchdog deadline is read on (a `Date.now()` time). */
export const watchdogNow: () => number = Date.now;

/** How long past the deadline the main thread has to handle it itself. */
const GRACE_MS = 1000;

/**
 * The thread's loop. Shared memory: word 0 (Int32) the generation, bumped by the main thread on
 * every change; bytes 8–15 (Float64) the earliest armed deadline as a `Date.now()` time, 0 when
 * none is armed. Once that time has passed it asks the main thread to run the check for the
 * generation it saw (a check for an older generation is ignored there), then sleeps until the
 * generation changes.
 */
const WORKER_SOURCE = `
const { workerData } = require("node:worker_threads");
const generation = new Int32Array(workerData.shared, 0, 1);
const deadline = new Float64Array(workerData.shared, 8, 1);
let session;
for (;;) {
  const seen = Atomics.load(generation, 0);
  const at = deadline[0];
  const left = at === 0 ? Infinity : at - Date.now();
  if (left > 0) {
    Atomics.wait(generation, 0, seen, left);
    continue;
  }
  try {
    if (!session) {
      const { Session } = require("node:inspector");
      session = new Session();
      session.connectToMainThread();
    }
    session.post("Runtime.evaluate", { expression: "globalThis[" + JSON.stringify(workerData.key) + "](" + seen + ")" }, () => {});
  } catch {}
  Atomics.wait(generation, 0, seen);
}
`;

interface Armed {
  /** When its `onStuck` is due (a `Date.now()` time). */
  at: number;
  onStuck: () => void;
}

/** The process's watch thread: the shared memory, the armed watchdogs. */
interface WatchThread {
  generation: Int32Array;
  deadline: Float64Array;
  armed: Set<Armed>;
}

let thread: WatchThread | undefined;

/** The watch thread, started now if it is not yet (rules above). Never throws. */
function watchThread(): WatchThread {
  if (thread) return thread;
  const shared = new SharedArrayBuffer(16);
  const started: WatchThread = { generation: new Int32Array(shared, 0, 1), deadline: new Float64Array(shared, 8, 1), armed: new Set() };
  const key = `__yiemWatchdog_${randomHex(8)}`;
  // Neither writable nor configurable: tool code cannot put a function of its own in its place.
  Object.defineProperty(globalThis, key, { configurable: false, writable: false, value: (seen: number) => checkStuck(started, seen) });
  try {
    // Loaded here, not at start-up: every command's start would compile worker_threads and its
    // ~6 internal modules for the one run in many that arms a watchdog (docs/performance.md).
    const { Worker } = process.getBuiltinModule("node:worker_threads");
    // Its stdout and stderr are its own (never read: it writes nothing). Left to the default,
    // Node pipes them into process.stdout and process.stderr, building both streams (net,
    // stream and their ~30 modules) for output that direct writes serve (./fd-output.ts).
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { shared, key }, stdout: true, stderr: true });
    worker.unref();
    worker.on("error", () => {});
  } catch {
    // no worker threads: the limit is not enforced for code that never yields
  }
  thread = started;
  return started;
}

/** Whether the process's watch thread has been started (arming a watchdog then costs nothing). */
export function watchThreadStarted(): boolean {
  return thread !== undefined;
}

/** Publishes the earliest armed deadline to the thread and wakes it. */
function publish(watch: WatchThread): void {
  let earliest = 0;
  for (const { at } of watch.armed) if (earliest === 0 || at < earliest) earliest = at;
  watch.deadline[0] = earliest;
  Atomics.add(watch.generation, 0, 1);
  Atomics.notify(watch.generation, 0);
}

/** On the main thread, asked by the thread: runs the `onStuck` of the earliest watchdog due, if any. */
function checkStuck(watch: WatchThread, seen: number): void {
  if (seen !== Atomics.load(watch.generation, 0)) return;
  let due: Armed | undefined;
  for (const armed of watch.armed) if (armed.at <= watchdogNow() && (!due || armed.at < due.at)) due = armed;
  if (!due) return;
  watch.armed.delete(due);
  publish(watch);
  due.onStuck();
}

/**
 * Arms a watchdog for `deadlineAt` (a `Date.now()` time); `onStuck` runs on the main thread when
 * it is still armed `graceMs` later.
 */
export function startWatchdog(deadlineAt: number, onStuck: () => void, graceMs = GRACE_MS): Watchdog {
  const watch = watchThread();
  const armed: Armed = { at: deadlineAt + graceMs, onStuck };
  watch.armed.add(armed);
  publish(watch);
  return {
    disarm() {
      if (watch.armed.delete(armed)) publish(watch);
    },
  };
}

/**
 * Exits with `code` from inside `onStuck`. The 'exit' listeners registered before this one still
 * run first (the event writer writes what it holds, child process groups are killed). When code
 * not yiem's would run on the way out too (an 'exit' listener of a tool, a replaced
 * `process.emit`: ../../exit-listeners.ts), only yiem's listeners run, and the process ends as
 * with `exitSkippingListeners`: that code may be stuck as well, and nothing could interrupt it,
 * since the inspector runs one request at a time and this is inside one. Then stderr is pointed
 * at /dev/null: Node prints "Waiting for the debugger to disconnect..." when it exits with the
 * watchdog's inspector session connected, and stderr must stay pure events.
 */
export function exitFromWatchdog(code: number): never {
  if (foreignExitListeners() > 0 || exitPathReplaced()) {
    runOwnExitListeners();
    return exitSkippingListeners(code);
  }
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
  // Node's own, not one a tool put in its place (../../exit-listeners.ts).
  reallyExitNow(code);
  return exitProcess(code);
}
