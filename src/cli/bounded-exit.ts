/**
 * The end of a command after its last event: it exits within a bounded time, with its own code.
 * Rules (docs/reliability.md, "Writes after the run"):
 * - after the run's last event yiem waits for stderr to take the events at most `exitGraceMs()`
 *   (`YIEM_EXIT_GRACE_MS`, default 2000), and not at all once a signal arrived: a reader that
 *   stopped reading cannot keep the process alive, nor swallow a SIGTERM;
 * - exiting itself is bounded too: when the process has not ended twice `exitGraceMs()` after
 *   `armExitBound` (armed right after the last event, before the wait above), the watch thread
 *   (./host/watchdog.ts, shared with a run watchdog) ends it from inside whatever code holds it (an 'exit' listener of a tool
 *   that never returns, a tool's timer that spins), with the same code, running no more
 *   listeners. Events the reader has not taken by then are lost;
 * - the thread is a Node bootstrap of its own (~10 ms of a one-turn run), so it is not started
 *   when nothing but yiem's code can run before the process ends: the events were all taken
 *   once the ticks and microtasks already queued have run (`settlesAtOnce`: a file, /dev/null,
 *   a FIFO or a small write to a socket; ./host/fd-output.ts), so the exit follows in this turn
 *   of the event loop and no tool timer can run first, and only yiem's code runs on the way
 *   out: every 'exit' listener is yiem's and what `process.exit` calls was not replaced
 *   (../exit-listeners.ts). A thread already started for the run's watchdog is armed anyway;
 * - `run` arms it after its last event; main.ts arms it after every other command, which may
 *   have run tool code too (`tools call`, `batch`, `mcp serve`, a tool module's top level). The
 *   process then ends with the command's code, whatever tool code sets on the way
 *   (`pinExitCode`, ../exit-listeners.ts).
 */
import type { CliIo } from "./io.js";
import { graceMs } from "../grace-ms.js";

const DEFAULT_EXIT_GRACE_MS = 2000;

export function exitGraceMs(env: NodeJS.ProcessEnv): number {
  return graceMs(env, "YIEM_EXIT_GRACE_MS", DEFAULT_EXIT_GRACE_MS);
}

/** `flushed`, but for at most the grace, and not past an abort of `signal`. Never rejects. */
export async function settleWithin(flushed: Promise<unknown>, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const bounded = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, exitGraceMs(env));
    timer.unref();
    if (signal) {
      onAbort = resolve;
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  try {
    await Promise.race([flushed.catch(() => {}), bounded]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * Whether `flushed` has settled once the ticks and microtasks queued before this call have run
 * (a write callback of ./host/fd-output.ts comes on the next tick). Never rejects.
 */
export async function settlesAtOnce(flushed: Promise<unknown>): Promise<boolean> {
  let settled = false;
  const mark = () => {
    settled = true;
  };
  flushed.then(mark, mark);
  for (let i = 0; i < SETTLE_TICKS && !settled; i++) {
    await new Promise<void>((resolve) => process.nextTick(resolve));
  }
  return settled;
}

/** Ticks `settlesAtOnce` waits at most: each also runs the microtasks queued by the one before. */
const SETTLE_TICKS = 4;

/**
 * From now on, the process ends with `code` within the grace, whatever holds it (rules above);
 * `exitFollows`: nothing but yiem's own code is left before the exit (`settlesAtOnce` said so).
 */
export function armExitBound(code: number, io: Pick<CliIo, "env" | "host">, exitFollows = false): void {
  io.host.armExitBound(code, 2 * exitGraceMs(io.env), exitFollows);
}
