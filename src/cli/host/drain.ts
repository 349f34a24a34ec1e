/**
 * Noticing that a command can no longer finish. Node exits (code 0) when its event loop has
 * nothing left to wait for, even while a command's promise is still pending: a tool module whose
 * top-level await never settles, an import cycle through `await import()`, a tool awaiting an
 * event that never fires with no timeout. Node then emits 'beforeExit'.
 *
 * Rules:
 * - `onEventLoopDrained(callback)` registers a watcher; on each 'beforeExit' only the most recent
 *   registered watcher is called (a command's own watcher before the generic one in main.ts).
 * - Before calling it, the exit code is set to 1, so a process that still ends on its own after
 *   the watcher (nothing new to do) never ends with 0.
 * - A command that finishes calls process.exit, which never emits 'beforeExit'.
 * Only the real process host (./process-io.ts) registers watchers here; commands reach it
 * through `io.host.onEventLoopDrained`.
 */
import type { CliHost } from "../io.js";

type Watcher = () => void;

const watchers: Watcher[] = [];
let installed = false;

function onBeforeExit(): void {
  const watcher = watchers.at(-1);
  if (!watcher) return;
  process.exitCode = 1;
  watcher();
}

/** Registers `callback` (see module rules); returns a function that unregisters it. */
export function onEventLoopDrained(callback: Watcher): () => void {
  if (!installed) {
    installed = true;
    process.on("beforeExit", onBeforeExit);
  }
  watchers.push(callback);
  return () => {
    const at = watchers.lastIndexOf(callback);
    if (at >= 0) watchers.splice(at, 1);
  };
}

/** `work`, or a rejection with `error()` if the event loop drains while it is pending (as `host` sees it). */
export function rejectOnDrain<T>(work: Promise<T>, error: () => Error, host: Pick<CliHost, "onEventLoopDrained">): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stop = host.onEventLoopDrained(() => {
      stop();
      reject(error());
    });
    work.then(
      (value) => {
        stop();
        resolve(value);
      },
      (failure: unknown) => {
        stop();
        reject(failure);
      },
    );
  });
}

/** What a drained event loop means for the user, for error messages. */
export const DRAINED_HINT =
  "nothing was left for it to wait for: a tool or hook awaits something that never happens (a promise that never settles, a module's top-level await that never finishes, an import cycle through await import())";
