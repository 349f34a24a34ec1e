/**
 * A cache for spec files, so that a warm start needs neither the YAML parser nor ajv (together
 * most of `yiem tools list`'s start-up). Rules:
 * - parsed specs are kept by the file's path (one entry per path) with the exact text they were
 *   parsed from; a hit gives the value only (no line map), so any error found on a cached spec is
 *   reported by loading again without the cache;
 * - "this interpolated spec is valid" is kept by the value's JSON with the exact schema text it
 *   was checked against, so a changed environment variable or schema is checked again;
 * - every entry holds the strings it stands for (`key`) and is used only when they equal the
 *   caller's exactly; entry names (`nameHash`) only place entries. Its first line is its
 *   signature (../cache-dir.ts: UNSIGNED in an owned cache, an HMAC in a signed one), so an entry
 *   planted in a signed cache (a checkout shipping one) never matches: it is ignored;
 * - entries unused for 30 days are pruned (cache-dir.ts);
 * - only values that survive JSON unchanged are kept or looked up (../plain-json.ts): a YAML
 *   `!!timestamp` (a Date) would come back as a string, which the schema may accept;
 * - the cache is the caller's (`scope`: the CLI's io, cache-dir.ts);
 * - the cache is an optimisation only: every read or write failure is ignored.
 */
import { join } from "node:path";
import { cacheFolder, cacheSignature, readCacheFile, signatureMatches, writeCacheFile, type CacheScope } from "../cache-dir.js";
import { noteUsed, pruneCacheFolder } from "../cache-prune.js";
import { nameHash } from "../name-hash.js";
import { survivesJson } from "../plain-json.js";

const FORMAT = "spec-cache-3";

/** Where an entry goes and what it stands for. */
interface EntryKey {
  /** The entry's file name. */
  name: string;
  /** The strings the entry stands for, compared exactly when it is read. */
  key: string[];
}

/** The value stored for `entry` when its signature and key match; else undefined. */
function read(scope: CacheScope, entry: EntryKey): unknown {
  const folder = cacheFolder("specs", scope);
  if (!folder) return undefined;
  const file = join(folder, entry.name);
  const hit = readCacheFile(file);
  if (!hit) return undefined;
  const text = hit.bytes.toString("utf8");
  const newline = text.indexOf("\n");
  if (newline < 0) return undefined;
  const body = text.slice(newline + 1);
  if (!signatureMatches(scope, text.slice(0, newline), FORMAT, "entry", entry.name, body)) return undefined;
  try {
    const stored = JSON.parse(body) as { key?: unknown; value?: unknown };
    const key = stored.key;
    if (!Array.isArray(key) || key.length !== entry.key.length || key.some((part, i) => part !== entry.key[i])) return undefined;
    noteUsed(file, hit.stats);
    return stored.value ?? null;
  } catch {
    return undefined;
  }
}

function write(scope: CacheScope, entry: EntryKey, value: unknown): void {
  const folder = cacheFolder("specs", scope);
  if (!folder) return;
  const body = JSON.stringify({ key: entry.key, value });
  const signature = cacheSignature(scope, FORMAT, "entry", entry.name, body);
  if (signature === null) return;
  try {
    writeCacheFile(join(folder, entry.name), `${signature}\n${body}`);
    pruneCacheFolder(folder);
  } catch {
    // a cache that cannot be written only costs speed
  }
}

function parseEntry(file: string, text: string): EntryKey {
  return { name: `${nameHash(FORMAT, "parse", file)}.json`, key: ["parse", file, text] };
}

function validEntry(value: unknown, schemaText: string): EntryKey {
  const json = JSON.stringify(value);
  return { name: `${nameHash(FORMAT, "valid", json)}.ok`, key: ["valid", json, schemaText] };
}

/** The cached parse of `file` with exactly `text`, if any. */
export function cachedParse(scope: CacheScope, file: string, text: string): { value: unknown } | undefined {
  const value = read(scope, parseEntry(file, text));
  return value === undefined ? undefined : { value };
}

export function storeParse(scope: CacheScope, file: string, text: string, value: unknown): void {
  if (survivesJson(value)) write(scope, parseEntry(file, text), value);
}

/** Whether `value` was already found valid against the schema with text `schemaText` (never for a value JSON would change: its JSON is another value's). */
export function knownValid(scope: CacheScope, value: unknown, schemaText: string): boolean {
  return survivesJson(value) && read(scope, validEntry(value, schemaText)) !== undefined;
}

export function storeValid(scope: CacheScope, value: unknown, schemaText: string): void {
  if (survivesJson(value)) write(scope, validEntry(value, schemaText), true);
}
