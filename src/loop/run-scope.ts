/**
 * A run's scope: its cancellation and its deadline as one signal, built from the caller's signal
 * and the run timeout. Tool calls, hooks and the provider derive their own signals from it.
 *
 * Rules:
 * - The stop reason travels as the abort reason: the deadline aborts with
 *   `RunStop("timeout", "run timed out after N ms")`, a caller may abort with any RunStop
 *   (abort.ts); any other reason means `aborted`. `stop()` reads it.
 * - The first abort wins: a later signal or deadline does not change how the run ends.
 * - The deadline counts from when the scope is opened (the CLI opens it once the spec is read,
 *   so reading stdin and loading tools count too), and `dispose()` ends it.
 * - Not `AbortSignal.timeout()`: its reason is a bare TimeoutError (no stop reason, no message)
 *   and its timer never keeps the process alive, while a library run must time out a tool that
 *   waits on nothing; `keepAlive: false` unrefs the timer for callers that detect an event loop
 *   that ran dry themselves (the CLI, ../cli/drain.ts).
 */
import { RunStop, stopOf } from "./abort.js";

export interface RunScope {
  /** The run's one signal: the caller's abort or the deadline, whichever comes first. */
  readonly signal: AbortSignal;
  /** The run timeout in ms (0: none). */
  readonly timeoutMs: number;
  /** When the deadline falls, as a `Date.now()` time; undefined without one. */
  readonly deadlineAt: number | undefined;
  /** How the run is to end once the signal aborted (abort.ts `stopOf`); undefined before. */
  stop(): ReturnType<typeof stopOf> | undefined;
  /** Clears the deadline timer (the run is over); the signal keeps its state. */
  dispose(): void;
}

export interface RunScopeOptions {
  /** The caller's signal (signals, a parent run, a server's cancellation). */
  signal?: AbortSignal;
  /** Whole run, ms; 0 or absent: no deadline. */
  timeoutMs?: number;
  /** Whether the deadline timer keeps the process alive (default true; see module rules). */
  keepAlive?: boolean;
}

export function openRunScope(options: RunScopeOptions = {}): RunScope {
  const timeoutMs = options.timeoutMs !== undefined && options.timeoutMs > 0 ? options.timeoutMs : 0;
  const sources: AbortSignal[] = options.signal ? [options.signal] : [];
  let timer: NodeJS.Timeout | undefined;
  if (timeoutMs > 0) {
    const deadline = new AbortController();
    timer = setTimeout(() => deadline.abort(new RunStop("timeout", `run timed out after ${timeoutMs} ms`)), timeoutMs);
    if (options.keepAlive === false) timer.unref();
    sources.push(deadline.signal);
  }
  const signal = sources.length === 1 ? sources[0] : sources.length > 1 ? AbortSignal.any(sources) : new AbortController().signal;
  return {
    signal,
    timeoutMs,
    deadlineAt: timeoutMs > 0 ? Date.now() + timeoutMs : undefined,
    stop: () => (signal.aborted ? stopOf(signal.reason) : undefined),
    dispose() {
      if (timer) clearTimeout(timer);
    },
  };
}
