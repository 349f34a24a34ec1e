/**
 * Pruning yiem's cache folders (src/cache-dir.ts). Rules:
 * - an entry is used when read (`noteUsed` moves its mtime to now, at most once a day);
 * - entries unused for 30 days and temp files left for an hour are deleted, checked at most once
 *   a day per folder, when something is written there;
 * - only files with yiem's entry names are ever deleted.
 */
import { statSync, unlinkSync, utimesSync, readdirSync, type Stats } from "node:fs";
import { basename, dirname, join } from "node:path";
import { writeCacheFile } from "./cache-dir.js";

const DAY_MS = 24 * 60 * 60 * 1000;
/** Entries whose file was not used (mtime) for this long are deleted. */
const UNUSED_ENTRY_MS = 30 * DAY_MS;
const STALE_TEMP_MS = 60 * 60 * 1000;

/** Marks the entry `file` (with `stats`) as used: its mtime is moved to now when over a day old. */
export function noteUsed(file: string, stats: Stats, now = Date.now()): void {
  if (now - stats.mtimeMs < DAY_MS) return;
  try {
    utimesSync(file, new Date(now), new Date(now));
  } catch {
    // a cache entry that cannot be touched is only pruned earlier
  }
}

/**
 * Names yiem gives cache entries (16 hex digits, `nameHash`; 64 before, still pruned; then
 * `.pack`, `.json`, `.ok` or `.code`) and their temp files.
 */
const ENTRY_NAME = /^(?:[0-9a-f]{16}|[0-9a-f]{64})\.(?:pack|json|ok|code)$/;
const TEMP_NAME = /^(?:[0-9a-f]{16}|[0-9a-f]{64})\.(?:pack|json|ok|code)\.\d+\.[0-9a-f]{12}\.tmp$/;

/**
 * Deletes the entries of the cache folder `dir` unused for UNUSED_ENTRY_MS and temp files left for
 * an hour; at most once a day per folder (the marker `.pruned-<name>` next to it records when).
 * Only files named as yiem names them are ever deleted.
 */
export function pruneCacheFolder(dir: string, now = Date.now()): void {
  const marker = join(dirname(dir), `.pruned-${basename(dir)}`);
  try {
    const last = statSync(marker, { throwIfNoEntry: false });
    if (last && now - last.mtimeMs < DAY_MS) return;
    writeCacheFile(marker, "");
    for (const name of readdirSync(dir)) {
      const file = join(dir, name);
      const temp = TEMP_NAME.test(name);
      if (!temp && !ENTRY_NAME.test(name)) continue;
      const stats = statSync(file, { throwIfNoEntry: false });
      if (!stats?.isFile()) continue;
      const limit = temp ? STALE_TEMP_MS : UNUSED_ENTRY_MS;
      if (now - stats.mtimeMs > limit) unlinkSync(file);
    }
  } catch {
    // pruning is housekeeping: it is tried again another day
  }
}
