/**
 * What runs as the process exits: yiem's own listeners of its 'exit' event, and the functions
 * `process.exit` calls on the way out. Rules:
 * - every 'exit' listener of yiem's code is added with `onProcessExit`, which marks it as yiem's;
 *   it runs once; the function returned removes it. `runOwnExitListeners` runs yiem's only, for
 *   an exit that must not run the others (cli/host/watchdog.ts);
 * - `foreignExitListeners()` counts the others (a tool's, a package's) of 'exit', and those of
 *   'removeListener' (which a run-once 'exit' listener emits as it runs) added after this module
 *   was evaluated (Node has its own, for signals): code that runs as the process exits and may
 *   never return. The exit bound (cli/bounded-exit.ts) starts its watch thread when there is one;
 * - `exitPathReplaced()` says whether code replaced what `process.exit` looks up as it runs
 *   (`process.emit`, `off`, `removeListener`, `reallyExit`, `_exiting`, on the process or its
 *   prototypes, or the prototypes themselves) since this module was evaluated, which is before
 *   any tool or hook module loads. A replacement may never return either; the exit bound then
 *   starts its thread too;
 * - `pinExitCode(code)` makes the process end with `code` whatever an 'exit' listener sets
 *   (`process.exitCode`) or a tool put in the place of `process.reallyExit`: the exit ends in
 *   Node's own `reallyExit` as it was when this module was evaluated (`reallyExitNow`). yiem's
 *   own exits (channels/guard.ts `exitProcess`) set the pinned code to theirs (`repinExitCode`);
 * - these checks are for code that holds the exit by mistake (an exit listener that waits, an
 *   instrumentation package that wraps `process.emit`). They read listeners and descriptors with
 *   functions taken when this module was evaluated and call no getter of the path, but tool code
 *   runs in this process with its rights: code written to defeat them can (docs/reliability.md).
 */
const apply = Reflect.apply;
const getDescriptor = Object.getOwnPropertyDescriptor;
const getPrototype = Object.getPrototypeOf;
const defineProperty = Object.defineProperty;
const rawListenersOf = process.rawListeners as (this: NodeJS.EventEmitter, event: string) => unknown[];
const addListener = process.on as (this: NodeJS.EventEmitter, event: string, listener: () => void) => unknown;
const removeListenerOf = process.removeListener as (this: NodeJS.EventEmitter, event: string, listener: () => void) => unknown;
const setHas = Set.prototype.has as (this: Set<unknown>, value: unknown) => boolean;
const setAdd = Set.prototype.add as (this: Set<unknown>, value: unknown) => Set<unknown>;
const setDelete = Set.prototype.delete as (this: Set<unknown>, value: unknown) => boolean;
const isProxy = (process.getBuiltinModule("node:util") as typeof import("node:util")).types.isProxy;

/** The functions yiem added to the process's 'exit' event (each a run-once wrapper of a listener). */
const own = new Set<unknown>();

const rawListeners = (event: string) => apply(rawListenersOf, process, [event]) as unknown[];

/** Adds `listener` to the process's 'exit' event as one of yiem's; returns its removal. */
export function onProcessExit(listener: () => void): () => void {
  let ran = false;
  const once = () => {
    if (ran) return;
    ran = true;
    remove();
    listener();
  };
  const remove = () => {
    apply(setDelete, own, [once]);
    apply(removeListenerOf, process, ["exit", once]);
  };
  apply(setAdd, own, [once]);
  apply(addListener, process, ["exit", once]);
  return remove;
}

/** Runs yiem's 'exit' listeners now, in the order they were added; one that throws does not stop the rest. */
export function runOwnExitListeners(): void {
  for (const listener of rawListeners("exit")) {
    if (!apply(setHas, own, [listener])) continue;
    try {
      (listener as () => void)();
    } catch {
      // the others still run
    }
  }
}

/** Node's own 'removeListener' listeners (signal handling), there before any of yiem's code ran. */
const nodesRemoveListeners = new Set<unknown>(rawListeners("removeListener"));

/** How many listeners of the process's 'exit' and 'removeListener' events are not yiem's (rules above). */
export function foreignExitListeners(): number {
  let count = 0;
  for (const listener of rawListeners("exit")) if (!apply(setHas, own, [listener])) count++;
  for (const listener of rawListeners("removeListener")) if (!apply(setHas, nodesRemoveListeners, [listener])) count++;
  return count;
}

/** The properties `process.exit` reads as it runs (Node 20's lib/internal/process/per_thread.js). */
const EXIT_PATH = ["emit", "off", "removeListener", "reallyExit", "_exiting"] as const;

/** One object of the process's prototype chain and its own descriptors of `EXIT_PATH`. */
interface Link {
  object: object;
  descriptors: (PropertyDescriptor | undefined)[];
}

/** The process's prototype chain with its descriptors of `EXIT_PATH`; null when a proxy is on it (its traps are code). */
function exitPathNow(): Link[] | null {
  const chain: Link[] = [];
  for (let object: object | null = process; object !== null; object = getPrototype(object) as object | null) {
    if (isProxy(object)) return null;
    const descriptors: (PropertyDescriptor | undefined)[] = [];
    for (const name of EXIT_PATH) descriptors.push(getDescriptor(object, name));
    chain.push({ object, descriptors });
  }
  return chain;
}

const asLoaded = exitPathNow() ?? [];
const REALLY_EXIT = EXIT_PATH.indexOf("reallyExit");

/** Node's `process.reallyExit` when this module was evaluated (rules above). */
const reallyExitAsLoaded = ((): ((code: number) => never) | undefined => {
  const value = asLoaded[0]?.descriptors[REALLY_EXIT]?.value;
  return typeof value === "function" ? (value as (code: number) => never) : undefined;
})();

/** Ends the process with `code` at once through Node's own `reallyExit` (rules above), running no listener; false when there is none. */
export function reallyExitNow(code: number): boolean {
  if (!reallyExitAsLoaded) return false;
  apply(reallyExitAsLoaded, process, [code]);
  return true;
}

const sameDescriptor = (a: PropertyDescriptor | undefined, b: PropertyDescriptor | undefined) =>
  a === b || (a !== undefined && b !== undefined && a.value === b.value && a.get === b.get && a.set === b.set);

/** Whether what `process.exit` runs was replaced since start-up (rules above). */
export function exitPathReplaced(): boolean {
  const now = exitPathNow();
  if (now === null || now.length !== asLoaded.length) return true;
  for (let i = 0; i < now.length; i++) {
    if (now[i].object !== asLoaded[i].object) return true;
    for (let j = 0; j < EXIT_PATH.length; j++) {
      const descriptor = now[i].descriptors[j];
      // yiem's own pinned reallyExit (`pinExitCode`) stands for Node's.
      if (i === 0 && j === REALLY_EXIT && ownReallyExit !== undefined && descriptor?.value === ownReallyExit) continue;
      if (!sameDescriptor(descriptor, asLoaded[i].descriptors[j])) return true;
    }
  }
  return false;
}

/** The code the process ends with once `pinExitCode` ran (rules above). */
let pinnedCode: number | undefined;
/** The `process.reallyExit` `pinExitCode` put in place (not a replacement by tool code). */
let ownReallyExit: unknown;

/**
 * From now on the process exits with `code`, whatever tool code sets or replaces on the way
 * (rules above). A later call (yiem's own exit with another code: a second signal) changes it.
 */
export function pinExitCode(code: number): void {
  if (!reallyExitAsLoaded) return;
  const first = pinnedCode === undefined;
  pinnedCode = code;
  if (!first) return;
  const exitWithPinnedCode = () => reallyExitNow(pinnedCode ?? code);
  ownReallyExit = exitWithPinnedCode;
  try {
    defineProperty(process, "reallyExit", { configurable: true, writable: true, value: exitWithPinnedCode });
  } catch {
    // a tool made it read-only: the exit then takes its code as Node gives it
  }
}

/** The code pinned last (`pinExitCode`, `repinExitCode`), or `fallback` when none is. */
export function pinnedExitCode(fallback: number): number {
  return pinnedCode ?? fallback;
}

/** For yiem's own exits: the pinned code (if any) becomes `code`. */
export function repinExitCode(code: number): void {
  if (pinnedCode !== undefined) pinnedCode = code;
}
