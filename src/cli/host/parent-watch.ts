/**
 * Noticing that yiem's parent process went away mid-run. A wrapper that dies without passing a
 * signal on (`npx yiem run … & kill -TERM $!` kills npx, not yiem) would otherwise leave yiem
 * running under PID 1, finishing a run nobody waits for.
 *
 * Rules:
 * - The parent is watched when yiem starts with a real parent: not when it already runs under
 *   PID 1, and not when it leads its own session (started with `setsid`, detached on purpose).
 * - The parent counts as gone when `process.ppid` changes (the kernel re-parents an orphan to
 *   PID 1 or to a subreaper). It is checked every `intervalMs` by a timer that never keeps the
 *   process alive.
 * - `onGone` is called at most once, with the old parent's pid.
 */
import { readFileSync } from "node:fs";

export const PARENT_CHECK_MS = 500;

/** Starts watching (see module rules); returns a function that stops it. */
export function watchParent(onGone: (parentPid: number) => void, intervalMs = PARENT_CHECK_MS): () => void {
  const parent = process.ppid;
  if (parent <= 1 || leadsOwnSession()) return () => {};
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone(parent);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** True when this process is a session leader (Linux /proc; elsewhere false, so it is watched). */
function leadsOwnSession(): boolean {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // pid (comm) state ppid pgrp session …; comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[3]) === process.pid;
  } catch {
    return false;
  }
}
