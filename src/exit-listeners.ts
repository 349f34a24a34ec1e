/**
 * yiem's own listeners of the process's 'exit' event. Rules:
 * - every 'exit' listener of yiem's code is added with `onProcessExit`, which marks it as yiem's;
 * - `foreignExitListeners()` counts the others (a tool's, a package's): code that runs as the
 *   process exits and may never return. The exit bound (cli/bounded-exit.ts) starts its watch
 *   thread when there is one;
 * - a listener runs once; the function returned removes it.
 */
const own = new WeakSet<(...args: unknown[]) => unknown>();

/** Adds `listener` to the process's 'exit' event as one of yiem's; returns its removal. */
export function onProcessExit(listener: () => void): () => void {
  own.add(listener);
  process.once("exit", listener);
  return () => {
    process.removeListener("exit", listener);
  };
}

/** How many 'exit' listeners of the process are not yiem's (rules above). */
export function foreignExitListeners(): number {
  let count = 0;
  for (const listener of process.listeners("exit")) if (!own.has(listener as (...args: unknown[]) => unknown)) count++;
  return count;
}
