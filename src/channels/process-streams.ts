/**
 * Whether Node has built the process's stdout and stderr streams, known without building them
 * (building `process.stdout` on a pipe loads ~40 of Node's modules: docs/performance.md, "Eleventh
 * pass"). Rules:
 * - `trackProcessStreams()` wraps the `process.stdout` / `process.stderr` getters; bin/yiem.js
 *   calls it before anything of yiem's runs, so every build of either stream (by yiem, by Node
 *   printing a warning, by tool code) goes through the wrapper;
 * - `builtStream(name)` is the stream once built, null before; undefined when nothing tracks
 *   (the library, tests in-process): the caller must then treat the stream as built;
 * - `onStreamBuilt(name, fn)` runs `fn(stream)` when the stream is built (at once when it already
 *   is); returns the unregister.
 */
export type ProcessStreamName = "stdout" | "stderr";

interface Tracked {
  stream: NodeJS.WriteStream | null;
  waiting: Set<(stream: NodeJS.WriteStream) => void>;
}

const tracked = new Map<ProcessStreamName, Tracked>();

/** Wraps the process's stream getters (rules above); a second call does nothing. */
export function trackProcessStreams(): void {
  for (const name of ["stdout", "stderr"] as const) {
    if (tracked.has(name)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(process, name);
    const getter = descriptor?.get;
    if (!descriptor?.configurable || !getter) continue; // already replaced by someone: untracked
    const entry: Tracked = { stream: null, waiting: new Set() };
    tracked.set(name, entry);
    Object.defineProperty(process, name, {
      configurable: true,
      enumerable: descriptor.enumerable,
      get() {
        const stream = getter.call(process) as NodeJS.WriteStream;
        if (entry.stream === null) {
          entry.stream = stream;
          for (const fn of [...entry.waiting]) fn(stream);
        }
        return stream;
      },
    });
  }
}

/** The stream `name` when Node has built it; null when not yet; undefined when untracked. */
export function builtStream(name: ProcessStreamName): NodeJS.WriteStream | null | undefined {
  return tracked.has(name) ? tracked.get(name)!.stream : undefined;
}

/** Runs `fn` once the tracked stream `name` is built (see rules); returns the unregister. Untracked: never runs. */
export function onStreamBuilt(name: ProcessStreamName, fn: (stream: NodeJS.WriteStream) => void): () => void {
  const entry = tracked.get(name);
  if (!entry) return () => {};
  if (entry.stream !== null) {
    fn(entry.stream);
    return () => {};
  }
  entry.waiting.add(fn);
  return () => entry.waiting.delete(fn);
}
