/**
 * What runs as the process exits: yiem's own listeners of its 'exit' event, and the functions
 * `process.exit` calls on the way out. Rules:
 * - every 'exit' listener of yiem's code is added with `onProcessExit`, which marks it as yiem's;
 * - `foreignExitListeners()` counts the others (a tool's, a package's) of 'exit', and those of
 *   'removeListener' (which a run-once 'exit' listener emits as it runs) added after this module
 *   was evaluated (Node has its own, for signals): code that runs as the
 *   process exits and may never return. The exit bound (cli/bounded-exit.ts) starts its watch
 *   thread when there is one;
 * - `exitPathReplaced()` says whether code replaced what `process.exit` looks up as it runs
 *   (`process.emit`, `off`, `removeListener`, `reallyExit`, `_exiting`, on the process or its
 *   prototypes, or the prototypes themselves) since this module was evaluated, which is before
 *   any tool or hook module loads. A replacement may never return either; the exit bound then
 *   starts its thread too. It reads property descriptors only: a getter is never called;
 * - `reallyExitAsLoaded` is Node's own `process.reallyExit` as it was then: the exit bound ends
 *   the process with it, not with whatever a tool put in its place;
 * - a listener runs once; the function returned removes it. `runOwnExitListeners` runs yiem's
 *   only, for an exit that must not run the others (cli/host/watchdog.ts).
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

/** Runs yiem's 'exit' listeners now, in the order they were added; one that throws does not stop the rest. */
export function runOwnExitListeners(): void {
  for (const listener of process.listeners("exit")) {
    if (!own.has(listener as (...args: unknown[]) => unknown)) continue;
    try {
      (listener as () => void)();
    } catch {
      // the others still run
    }
  }
}

/** How many listeners of the process's 'exit' and 'removeListener' events are not yiem's (rules above). */
export function foreignExitListeners(): number {
  let count = 0;
  for (const listener of process.listeners("exit")) if (!own.has(listener as (...args: unknown[]) => unknown)) count++;
  for (const listener of removeListeners()) if (!nodesRemoveListeners.has(listener)) count++;
  return count;
}

/** Node's own 'removeListener' listeners (signal handling), there before any of yiem's code ran. */
const nodesRemoveListeners = new Set<unknown>(removeListeners());

/** The process's 'removeListener' listeners (its typings only know the event's signal overloads). */
function removeListeners(): unknown[] {
  return (process as NodeJS.EventEmitter).listeners("removeListener");
}

/** The properties `process.exit` reads as it runs (Node 20's lib/internal/process/per_thread.js). */
const EXIT_PATH = ["emit", "off", "removeListener", "reallyExit", "_exiting"] as const;

/** One object of the process's prototype chain and its own descriptors of `EXIT_PATH`. */
interface Link {
  object: object;
  descriptors: (PropertyDescriptor | undefined)[];
}

function exitPathNow(): Link[] {
  const chain: Link[] = [];
  for (let object: object | null = process; object !== null; object = Object.getPrototypeOf(object)) {
    chain.push({ object, descriptors: EXIT_PATH.map((name) => Object.getOwnPropertyDescriptor(object, name)) });
  }
  return chain;
}

const asLoaded = exitPathNow();

/** Node's `process.reallyExit` when this module was evaluated (rules above). */
export const reallyExitAsLoaded: ((code: number) => never) | undefined = (() => {
  const value = asLoaded[0].descriptors[EXIT_PATH.indexOf("reallyExit")]?.value;
  return typeof value === "function" ? (value as (code: number) => never) : undefined;
})();

const sameDescriptor = (a: PropertyDescriptor | undefined, b: PropertyDescriptor | undefined) =>
  a === b || (a !== undefined && b !== undefined && a.value === b.value && a.get === b.get && a.set === b.set);

/** Whether what `process.exit` runs was replaced since start-up (rules above). */
export function exitPathReplaced(): boolean {
  const now = exitPathNow();
  if (now.length !== asLoaded.length) return true;
  return now.some((link, i) => link.object !== asLoaded[i].object || link.descriptors.some((descriptor, j) => !sameDescriptor(descriptor, asLoaded[i].descriptors[j])));
}
