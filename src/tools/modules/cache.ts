/**
 * The persistent cache of transformed module code, under `<yiemCacheDir()>/modules/`. Rules:
 * - an entry's key is the sha256 of the loader's output format version, the sucrase version, the
 *   absolute file path and the source: any change to one of them is a miss;
 * - entries are kept in one pack file per source folder (`<nameHash of the folder>.pack`), since
 *   creating and opening hundreds of small files costs more than transforming them: a folder of
 *   500 tools is one read when warm and one write when cold;
 * - new entries are written once the current burst of loads is over (or at process exit at the
 *   latest): merged with what is on disk then, to a temp file renamed into place, so a reader sees
 *   a whole pack or none. Entries of files that no longer exist are dropped on a write;
 * - a pack's second line is its signature (../../cache-dir.ts): UNSIGNED in an owned cache (one
 *   only this user's yiem writes), else an HMAC of its folder and content under the per-user
 *   cache key, so a pack yiem did not write itself in a signed cache (say, one shipped with a
 *   checkout in its `.cache`) reads as empty and none of its code runs. Entries are found by
 *   their exact path. Packs unused for 30 days are deleted, and only a trusted cache folder is
 *   used (cache-dir.ts);
 * - an entry also keeps the stat signature (size, mtime, ctime, inode, device) its source had when
 *   read, if the file had then been unchanged for STAT_TRUST_MS (so a write in the same clock
 *   tick cannot look unchanged; `ctime` cannot be set back by tools that preserve mtimes): a file
 *   whose stat still matches is served without reading it (`readCachedIfUnchanged`), which is
 *   most of a warm start's file reads. Any difference falls back to reading and hashing;
 * - the cache folder and key are the caller's (`scope`, ../../cache-dir.ts: the CLI's io), given
 *   with each lookup; a pack keeps the scope it was read under for its write;
 * - the cache is only ever an optimisation: every read or write failure is ignored.
 */
import { hash } from "node:crypto";
import { existsSync, readFileSync, statSync, type Stats } from "node:fs";
import { dirname, join } from "node:path";
import { cacheFolder, cacheSignature, cacheTrustId, readCacheFile, signatureMatches, writeCacheFile, type CacheScope } from "../../cache-dir.js";
import { noteUsed, pruneCacheFolder } from "../../cache-prune.js";
import { nameHash } from "../../name-hash.js";
import { requireCjs } from "../../require-cjs.js";
import { onProcessExit } from "../../exit-listeners.js";

/** Bump when the transformed code, the way it is run or the pack layout changes. */
const FORMAT_VERSION = "yiem-modules-6";

/** A source unchanged for this long when read is trusted to be unchanged while its stat matches. */
const STAT_TRUST_MS = 2000;
const PACK_MAGIC = `${FORMAT_VERSION}\n`;

let sucraseVersion: string | undefined;

/** Sucrase's version from its package.json, without loading sucrase itself. */
function getSucraseVersion(): string {
  if (sucraseVersion === undefined) {
    try {
      sucraseVersion = String((JSON.parse(readFileSync(requireCjs.resolve("sucrase/package.json"), "utf8")) as { version?: unknown }).version);
    } catch {
      sucraseVersion = "unknown";
    }
  }
  return sucraseVersion;
}

/** The trusted cache folder of transformed modules of `scope` (follows `YIEM_CACHE_DIR`), or null: no caching. */
export function modulesCacheDir(scope: CacheScope): string | null {
  return cacheFolder("modules", scope);
}

/** The cache key of `source` read from the absolute path `file`. */
export function cacheKey(file: string, source: string): string {
  return hash("sha256", `${FORMAT_VERSION}\0${getSucraseVersion()}\0${file}\0${source}`, "hex");
}

interface Entry {
  key: string;
  code: string;
  /** `statSignature` of the source when read, or null when it was too fresh to trust. */
  stat: string | null;
}

/** The stat signature of a source read at `readAt` (ms since the epoch), or null if too fresh to trust. */
export function statSignature(stats: Stats, readAt: number): string | null {
  return Math.max(stats.ctimeMs, stats.mtimeMs) < readAt - STAT_TRUST_MS ? signatureOf(stats) : null;
}

function signatureOf(stats: Stats): string {
  return `${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}:${stats.ino}:${stats.dev}`;
}

interface Pack {
  /** The pack file; null when no trusted cache folder exists (nothing is read or written). */
  file: string | null;
  /** The source folder whose files the pack holds. */
  folder: string;
  /** Whose cache the pack is in (its key signs the pack). */
  scope: CacheScope;
  entries: Map<string, Entry>;
  /** Paths whose entry this process looked up or added (never dropped on a write). */
  used: Set<string>;
  dirty: boolean;
}

/** Packs by cache folder, its trust (`cacheTrustId`) and source folder. */
const packs = new Map<string, Pack>();

/** The pack holding the entries of files in `folder`, read from disk on first use. */
function packFor(folder: string, scope: CacheScope): Pack {
  const cacheDir = modulesCacheDir(scope);
  const id = `${cacheDir}\0${cacheTrustId(scope)}\0${folder}`;
  let pack = packs.get(id);
  if (!pack) {
    const file = cacheDir === null ? null : join(cacheDir, `${nameHash(FORMAT_VERSION, folder)}.pack`);
    pack = { file, folder, scope, entries: readPack(file, folder, scope), used: new Set(), dirty: false };
    packs.set(id, pack);
  }
  return pack;
}

/** What a pack's signature covers: the format, its source folder and its content `body`. */
function signedParts(folder: string, body: string): string[] {
  return [FORMAT_VERSION, "pack", folder, body];
}

/**
 * Pack layout: the format line, the signature line (of `signedParts`: everything after it), a JSON line
 * `[[path, key, length, stat], …]`, then every entry's code back to back (lengths in UTF-16 units).
 * Anything unexpected, or a wrong signature, reads as an empty pack.
 */
function readPack(file: string | null, folder: string, scope: CacheScope): Map<string, Entry> {
  const entries = new Map<string, Entry>();
  if (file === null) return entries;
  try {
    const read = readCacheFile(file);
    if (!read) return entries;
    const text = read.bytes.toString("utf8");
    if (!text.startsWith(PACK_MAGIC)) return entries;
    const macEnd = text.indexOf("\n", PACK_MAGIC.length);
    if (macEnd < 0 || !signatureMatches(scope, text.slice(PACK_MAGIC.length, macEnd), ...signedParts(folder, text.slice(macEnd + 1)))) return entries;
    const headerEnd = text.indexOf("\n", macEnd + 1);
    const header = JSON.parse(text.slice(macEnd + 1, headerEnd)) as Array<[string, string, number, string | null]>;
    let offset = headerEnd + 1;
    for (const [path, key, length, stat] of header) {
      entries.set(path, { key, code: text.slice(offset, offset + length), stat: typeof stat === "string" ? stat : null });
      offset += length;
    }
    if (offset !== text.length) entries.clear();
    else noteUsed(file, read.stats);
  } catch {
    entries.clear();
  }
  return entries;
}

/** The cached code of the file `path` whose content has cache key `key`, or null. */
export function readCachedCode(path: string, key: string, scope: CacheScope): string | null {
  const pack = packFor(dirname(path), scope);
  pack.used.add(path);
  const entry = pack.entries.get(path);
  return entry && entry.key === key ? entry.code : null;
}

/**
 * The cache entry of `path` when the file's stat still equals the trusted signature recorded
 * with it (see module rules), or null: then read the file and go by its content.
 */
export function readCachedIfUnchanged(path: string, scope: CacheScope): { key: string; code: string } | null {
  const pack = packFor(dirname(path), scope);
  const entry = pack.entries.get(path);
  if (!entry?.stat) return null;
  let stats: Stats | undefined;
  try {
    stats = statSync(path, { throwIfNoEntry: false });
  } catch {
    return null;
  }
  if (!stats || signatureOf(stats) !== entry.stat) return null;
  pack.used.add(path);
  return entry;
}

/** Records the stat signature of the source whose content has key `key` (after a read). */
export function noteSourceStat(path: string, key: string, stat: string | null, scope: CacheScope): void {
  const pack = packFor(dirname(path), scope);
  const entry = pack.entries.get(path);
  if (!entry || entry.key !== key || entry.stat === stat) return;
  entry.stat = stat;
  markDirty(pack);
}

let flushScheduled = false;
/** Removes flushPacks from the process's exit (set while a flush is scheduled). */
let unhookFlush: () => void = () => {};

/** Adds `code` for the file `path` with cache key `key`; written to disk after the current burst. */
export function writeCachedCode(path: string, key: string, code: string, stat: string | null, scope: CacheScope): void {
  const pack = packFor(dirname(path), scope);
  pack.used.add(path);
  pack.entries.set(path, { key, code, stat });
  markDirty(pack);
}

function markDirty(pack: Pack): void {
  pack.dirty = true;
  if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flushPacks);
    unhookFlush = onProcessExit(flushPacks);
  }
}

/** Writes every changed pack (merged with its current disk version). Never throws. */
function flushPacks(): void {
  if (!flushScheduled) return;
  flushScheduled = false;
  unhookFlush();
  for (const pack of packs.values()) {
    if (!pack.dirty) continue;
    pack.dirty = false;
    if (pack.file === null) continue;
    for (const [path, entry] of readPack(pack.file, pack.folder, pack.scope)) {
      if (!pack.entries.has(path)) pack.entries.set(path, entry);
    }
    for (const path of pack.entries.keys()) {
      if (!pack.used.has(path) && !existsSync(path)) pack.entries.delete(path);
    }
    writePack(pack);
  }
}

function writePack(pack: Pack): void {
  if (pack.file === null) return;
  const header: Array<[string, string, number, string | null]> = [];
  const codes: string[] = [];
  for (const [path, { key, code, stat }] of pack.entries) {
    header.push([path, key, code.length, stat]);
    codes.push(code);
  }
  const body = `${JSON.stringify(header)}\n${codes.join("")}`;
  const signature = cacheSignature(pack.scope, ...signedParts(pack.folder, body));
  if (signature === null) return;
  try {
    writeCacheFile(pack.file, `${PACK_MAGIC}${signature}\n${body}`);
    pruneCacheFolder(dirname(pack.file));
  } catch {
    // a cache that cannot be written only costs speed
  }
}
