/**
 * One writer per session: an exclusive lock file `<id>.lock` next to the session file.
 * Rules:
 * - The lock is taken by hard-linking a fully written temp file to `<id>.lock`: the link fails
 *   when the lock exists, and a lock file is never seen half written. It holds
 *   `{pid, hostname, token, since}`.
 * - A lock whose holder is a dead process on this host (pid gone) is stale and is broken; a lock
 *   of another host is never guessed about. Breaking is itself serialized (`<id>.lock.break`,
 *   taken the same way) and re-checks the token, so two waiters never remove a fresh lock.
 * - A busy lock is waited for (polling, up to 250 ms apart) until the caller's signal aborts,
 *   or refused at once (`wait: false`) with SessionBusyError naming the holder.
 * - The holder removes the lock when done, and on process exit whatever path it takes.
 */
import { randomHex } from "../random-id.js";
import { readFileSync, unlinkSync } from "node:fs";
import { link, readFile, stat, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { onProcessExit } from "../exit-listeners.js";

export interface LockHolder {
  pid: number;
  hostname: string;
  /** When the lock was taken (ISO-8601). */
  since: string;
}

/** The session is locked by another live run and the caller would not wait. */
export class SessionBusyError extends Error {
  override readonly name = "SessionBusyError";
  constructor(readonly id: string, readonly holder: LockHolder | undefined) {
    super(`session ${id} is in use by another yiem run (${describeHolder(holder)})`);
  }
}

export function describeHolder(holder: LockHolder | undefined): string {
  return holder ? `pid ${holder.pid} on ${holder.hostname}, since ${holder.since}` : "holder unknown";
}

export interface SessionLock {
  release(): Promise<void>;
}

export interface LockOptions {
  /** false: throw SessionBusyError at once when the lock is held. */
  wait: boolean;
  /** Ends the wait (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
  /** Called once, when the first attempt finds the lock held and the caller waits. */
  onWaiting?: (holder: LockHolder | undefined) => void;
}

/** A lock file whose content cannot be read is taken as stale after this long. */
const UNREADABLE_STALE_MS = 10_000;

export function lockPath(dir: string, id: string): string {
  return join(dir, `${id}.lock`);
}

export async function acquireSessionLock(dir: string, id: string, options: LockOptions): Promise<SessionLock> {
  const file = lockPath(dir, id);
  const token = randomHex(12);
  const content = JSON.stringify({ pid: process.pid, hostname: hostname(), token, since: new Date().toISOString() });
  let waited = false;
  for (let attempt = 0; ; attempt++) {
    options.signal?.throwIfAborted();
    if (await linkExclusive(dir, file, content)) return heldLock(file, token);
    const seen = await readLock(file);
    if (seen === "gone") continue;
    if (await isStale(file, seen)) {
      await breakStale(dir, file, seen);
      continue;
    }
    const holder = seen === "unreadable" ? undefined : seen;
    if (!options.wait) throw new SessionBusyError(id, holder);
    if (!waited) {
      waited = true;
      options.onWaiting?.(holder);
    }
    await sleep(Math.min(250, 20 * 2 ** Math.min(attempt, 4)) + Math.random() * 30, options.signal);
  }
}

type SeenLock = (LockHolder & { token: string }) | "unreadable" | "gone";

async function readLock(file: string): Promise<SeenLock> {
  try {
    const value = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
    if (typeof value.pid !== "number" || typeof value.hostname !== "string" || typeof value.token !== "string") return "unreadable";
    return { pid: value.pid, hostname: value.hostname, token: value.token, since: String(value.since ?? "") };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "gone";
    return "unreadable";
  }
}

async function isStale(file: string, seen: Exclude<SeenLock, "gone">): Promise<boolean> {
  if (seen === "unreadable") return olderThan(file, UNREADABLE_STALE_MS);
  return seen.hostname === hostname() && !isAlive(seen.pid);
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes the stale lock `seen`, unless another waiter is already at it or it changed meanwhile. */
async function breakStale(dir: string, file: string, seen: Exclude<SeenLock, "gone">): Promise<void> {
  const breaker = `${file}.break`;
  if (!(await linkExclusive(dir, breaker, String(process.pid)))) {
    // Another waiter is breaking it; a breaker left by a crash is removed after a while.
    if (await olderThan(breaker, UNREADABLE_STALE_MS)) await unlink(breaker).catch(() => {});
    await sleep(20);
    return;
  }
  try {
    const now = await readLock(file);
    const same = now === "unreadable" ? seen === "unreadable" : now !== "gone" && seen !== "unreadable" && now.token === seen.token;
    if (same) await unlink(file).catch(() => {});
  } finally {
    await unlink(breaker).catch(() => {});
  }
}

/** Creates `file` with `content` only if it does not exist, never visible half written. */
async function linkExclusive(dir: string, file: string, content: string): Promise<boolean> {
  const temp = join(dir, `.yiem-tmp-lock-${randomHex(6)}`);
  await writeFile(temp, content, { mode: 0o600, flag: "wx" });
  try {
    await link(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    await unlink(temp).catch(() => {});
  }
}

function heldLock(file: string, token: string): SessionLock {
  const ours = () => {
    try {
      return (JSON.parse(readFileSync(file, "utf8")) as { token?: unknown }).token === token;
    } catch {
      return false;
    }
  };
  const releaseSync = () => {
    if (ours()) {
      try {
        unlinkSync(file);
      } catch {
        // already gone
      }
    }
  };
  const unhook = onProcessExit(releaseSync);
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      unhook();
      releaseSync();
    },
  };
}

async function olderThan(file: string, ms: number): Promise<boolean> {
  try {
    return Date.now() - (await stat(file)).mtimeMs > ms;
  } catch {
    return false;
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
