/**
 * A content-hash cache for spec files, so that a warm start needs neither the YAML parser nor
 * ajv (together most of `yiem tools list`'s start-up). Rules:
 * - parsed specs are keyed by the file's path and exact text; a hit gives the value only (no line
 *   map), so any error found on a cached spec is reported by loading again without the cache;
 * - "this interpolated spec is valid" is keyed by the value's JSON and the schema's text, so a
 *   changed environment variable or schema is checked again;
 * - entry names and contents are HMACs under the per-user cache key (cache-dir.ts), so an entry
 *   planted in the cache folder (a checkout shipping one) never matches: it is ignored;
 * - entries unused for 30 days are pruned (cache-dir.ts);
 * - the cache is the caller's (`scope`: the CLI's io, cache-dir.ts);
 * - the cache is an optimisation only: every read or write failure is ignored.
 */
import { join } from "node:path";
import { cacheFolder, cacheMac, noteUsed, pruneCacheFolder, readCacheFile, writeCacheFile, type CacheScope } from "../cache-dir.js";

const FORMAT = "spec-cache-2";

/** The entry name for `parts` (an HMAC), or null when nothing may be cached. */
function entryName(scope: CacheScope, suffix: string, ...parts: string[]): string | null {
  const mac = cacheMac(scope, FORMAT, ...parts);
  return mac === null ? null : `${mac}${suffix}`;
}

/** The body of the entry `name`, when its signature (first line) is valid. */
function read(scope: CacheScope, name: string | null): string | undefined {
  const folder = name && cacheFolder("specs", scope);
  if (!name || !folder) return undefined;
  const file = join(folder, name);
  const hit = readCacheFile(file);
  if (!hit) return undefined;
  const text = hit.bytes.toString("utf8");
  const newline = text.indexOf("\n");
  const body = text.slice(newline + 1);
  if (newline < 0 || text.slice(0, newline) !== cacheMac(scope, FORMAT, "entry", name, body)) return undefined;
  noteUsed(file, hit.stats);
  return body;
}

function write(scope: CacheScope, name: string | null, body: string): void {
  const folder = name && cacheFolder("specs", scope);
  const mac = name && cacheMac(scope, FORMAT, "entry", name, body);
  if (!name || !folder || !mac) return;
  try {
    writeCacheFile(join(folder, name), `${mac}\n${body}`);
    pruneCacheFolder(folder);
  } catch {
    // a cache that cannot be written only costs speed
  }
}

/** The cached parse of `file` with exactly `text`, if any. */
export function cachedParse(scope: CacheScope, file: string, text: string): { value: unknown } | undefined {
  const hit = read(scope, entryName(scope, ".json", "parse", file, text));
  if (hit === undefined) return undefined;
  try {
    return { value: (JSON.parse(hit) as { value: unknown }).value };
  } catch {
    return undefined;
  }
}

export function storeParse(scope: CacheScope, file: string, text: string, value: unknown): void {
  write(scope, entryName(scope, ".json", "parse", file, text), JSON.stringify({ value }));
}

/** Whether `value` was already found valid against the schema with text `schemaText`. */
export function knownValid(scope: CacheScope, value: unknown, schemaText: string): boolean {
  return read(scope, entryName(scope, ".ok", "valid", schemaText, JSON.stringify(value))) !== undefined;
}

export function storeValid(scope: CacheScope, value: unknown, schemaText: string): void {
  write(scope, entryName(scope, ".ok", "valid", schemaText, JSON.stringify(value)), "");
}
