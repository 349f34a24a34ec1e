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
