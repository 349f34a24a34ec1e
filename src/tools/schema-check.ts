/**
 * The load-time check of tool input schemas: a schema ajv cannot use is a load problem, like a
 * syntax error. Rules:
 * - a schema is checked by `inputSchemaProblem` (the JSON Schema meta-schema, then compiled by the
 *   very ajv that validates arguments), so what loads is what validates;
 * - schemas found valid are remembered by the HMAC of their JSON text under the per-user cache key
 *   (src/cache-dir.ts: a key cannot be forged, so a cache shipped with a checkout proves nothing)
 *   in `valid.json` of the trusted cache folder `schemas`, so a warm start checks nothing and
 *   never loads ajv (~65 ms); an invalid schema is never remembered, so it is reported every time;
 *   with no trusted cache folder every schema is checked every time;
 * - a schema that has no JSON text (a cycle, a BigInt) is a problem;
 * - the cache is only an optimisation: read and write failures are ignored; it is written to a
 *   new temp file renamed into place, merged with the disk version, and keeps the newest
 *   MAX_ENTRIES keys.
 */
import { join } from "node:path";
import { cacheFolder, cacheMac, readCacheFile, writeCacheFile, type CacheScope } from "../cache-dir.js";
import type { Tool } from "./types.js";

/** Bump when what counts as a valid schema changes, e.g. with a new ajv (pinned in package.json). */
const FORMAT_VERSION = "yiem-schemas-1";
const MAX_ENTRIES = 20_000;

/** Keys known valid in this process, by cache file (each read from disk once, then kept up to date). */
const known = new Map<string | null, Set<string>>();

/** The cache file of `scope` (follows `YIEM_CACHE_DIR`); null when there is no trusted cache folder. */
export function schemaCacheFile(scope: CacheScope): string | null {
  const dir = cacheFolder("schemas", scope);
  return dir === null ? null : join(dir, "valid.json");
}

/** Each tool whose inputSchema cannot be used, with the reason; tools not in the map are fine. Known-valid schemas are `scope`'s. */
export async function findSchemaProblems(tools: Tool[], scope: CacheScope): Promise<Map<Tool, string>> {
  const problems = new Map<Tool, string>();
  const file = schemaCacheFile(scope);
  const valid = knownValid(file);
  // Schemas to check, by JSON text (tools with equal schemas are checked once).
  const toCheck = new Map<string, { key: string | null; tools: Tool[] }>();
  for (const tool of tools) {
    let json: string | undefined;
    try {
      json = JSON.stringify(tool.inputSchema);
    } catch (error) {
      problems.set(tool, `it is not plain JSON (${(error as Error).message.split("\n")[0]})`);
      continue;
    }
    if (typeof json !== "string") {
      problems.set(tool, "it is not plain JSON");
      continue;
    }
    const entry = toCheck.get(json);
    if (entry) {
      entry.tools.push(tool);
      continue;
    }
    const key = cacheMac(scope, FORMAT_VERSION, "schema", json);
    if (key === null || !valid.has(key)) toCheck.set(json, { key, tools: [tool] });
  }
  if (toCheck.size === 0) return problems;
  const { inputSchemaProblem } = await import("./validate.js");
  const found: string[] = [];
  for (const { key, tools: sharing } of toCheck.values()) {
    const problem = await inputSchemaProblem(sharing[0].inputSchema);
    if (problem !== null) for (const tool of sharing) problems.set(tool, problem);
    else if (key !== null) found.push(key);
  }
  if (found.length > 0) remember(file, found);
  return problems;
}

function knownValid(file: string | null): Set<string> {
  let set = known.get(file);
  if (!set) {
    set = new Set(readKeys(file));
    known.set(file, set);
  }
  return set;
}

function readKeys(file: string | null): string[] {
  const read = file === null ? undefined : readCacheFile(file);
  if (!read) return [];
  try {
    const data = JSON.parse(read.bytes.toString("utf8")) as { format?: unknown; valid?: unknown };
    if (data.format !== FORMAT_VERSION || !Array.isArray(data.valid)) return [];
    return data.valid.filter((k): k is string => typeof k === "string");
  } catch {
    return [];
  }
}

/** Adds `keys` to the known set and writes the merged set (disk version first, newest last). */
function remember(file: string | null, keys: string[]): void {
  const set = knownValid(file);
  for (const key of keys) set.add(key);
  if (file === null) return;
  const all = [...new Set([...readKeys(file), ...set])].slice(-MAX_ENTRIES);
  try {
    writeCacheFile(file, JSON.stringify({ format: FORMAT_VERSION, valid: all }));
  } catch {
    // a cache that cannot be written only costs speed
  }
}
