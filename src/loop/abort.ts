/**
 * Racing work against the run's abort signal. Rule: code the loop awaits on behalf of a tool or a
 * hook (prepareArguments, validateRequiredArgs, beforeToolCall, afterToolCall) may ignore its
 * signal; the loop never waits for it past an abort. The abandoned promise is left behind.
 */

/** `work`'s value, or `onAbort()`'s (or its throw) as soon as `signal` aborts (at once when it already has). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal, onAbort: () => T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      try {
        resolve(onAbort());
      } catch (error) {
        reject(error);
      }
    };
    if (signal.aborted) {
      work.catch(() => {});
      return abort();
    }
    signal.addEventListener("abort", abort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}

/**
 * An abort reason that says how the run is to end. A caller that aborts the run's signal with a
 * RunStop gets `agentEnd` with its `stopReason` and its message as `error` (e.g. the CLI's own
 * run deadline: `timeout`; an event loop that ran dry: `error`). Any other reason ends the run
 * `aborted`.
 */
export class RunStop extends Error {
  override readonly name = "RunStop";
  constructor(
    readonly stopReason: "timeout" | "error" | "aborted",
    message: string,
  ) {
    super(message);
  }
}

/** The RunStop an abort reason is, if it is one. */
export function runStopOf(reason: unknown): RunStop | undefined {
  return reason instanceof RunStop ? reason : undefined;
}

/** How a run stopped by `reason` ends: a RunStop's stop reason and message, else `aborted` ("run aborted"). */
export function stopOf(reason: unknown): { stopReason: RunStop["stopReason"]; message: string } {
  const runStop = runStopOf(reason);
  return runStop ? { stopReason: runStop.stopReason, message: runStop.message } : { stopReason: "aborted", message: "run aborted" };
}
