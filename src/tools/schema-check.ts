/**
 * The load-time check of tool input schemas: a schema ajv cannot use is a load problem, like a
 * syntax error. Rules:
 * - a schema is checked by `inputSchemaProblem` (the JSON Schema meta-schema, then compiled by the
 *   very ajv that validates arguments), so what loads is what validates;
 * - schemas found valid are remembered by their exact JSON text in `valid.json` of the trusted
 *   cache folder `schemas`, so a warm start checks nothing and never loads ajv (~65 ms); an
 *   invalid schema is never remembered, so it is reported every time; with no trusted cache
 *   folder every schema is checked every time. The file's first line is its signature
 *   (src/cache-dir.ts: UNSIGNED in an owned cache, else an HMAC of the rest under the per-user
 *   key, which cannot be forged, so a signed cache shipped with a checkout proves nothing);
 * - a schema that has no JSON text (a cycle, a BigInt) is a problem;
 * - the cache is only an optimisation: read and write failures are ignored; it is written to a
 *   new temp file renamed into place, merged with the disk version, and keeps the newest
 *   MAX_ENTRIES schemas, MAX_CHARS of text at most.
 */
import { join } from "node:path";
import { cacheFolder, cacheSignature, cacheTrustId, readCacheFile, signatureMatches, writeCacheFile, type CacheScope } from "../cache-dir.js";
import type { Tool } from "./types.js";

/** Bump when what counts as a valid schema changes, e.g. with a new ajv (pinned in package.json). */
const FORMAT_VERSION = "yiem-schemas-2";
const MAX_ENTRIES = 5_000;
/** …and at most this many characters of schema text (the newest kept): the file is read at every start that loads tools. */
const MAX_CHARS = 2_000_000;

/** Schema JSON texts known valid in this process, by cache file and its trust (`cacheTrustId`; each read from disk once, then kept up to date). */
const known = new Map<string, Set<string>>();

/** The cache file of `scope` (follows `YIEM_CACHE_DIR`); null when there is no trusted cache folder. */
export function schemaCacheFile(scope: CacheScope): string | null {
  const dir = cacheFolder("schemas", scope);
  return dir === null ? null : join(dir, "valid.json");
}

/** Each tool whose inputSchema cannot be used, with the reason; tools not in the map are fine. Known-valid schemas are `scope`'s. */
export async function findSchemaProblems(tools: Tool[], scope: CacheScope): Promise<Map<Tool, string>> {
  const problems = new Map<Tool, string>();
  const file = schemaCacheFile(scope);
  const valid = knownValid(file, scope);
  // Schemas to check, by JSON text (tools with equal schemas are checked once).
  const toCheck = new Map<string, Tool[]>();
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
    const sharing = toCheck.get(json);
    if (sharing) sharing.push(tool);
    else if (!valid.has(json)) toCheck.set(json, [tool]);
  }
  if (toCheck.size === 0) return problems;
  const { inputSchemaProblem } = await import("./validate.js");
  const found: string[] = [];
  for (const [json, sharing] of toCheck) {
    const problem = await inputSchemaProblem(sharing[0].inputSchema);
    if (problem !== null) for (const tool of sharing) problems.set(tool, problem);
    else found.push(json);
  }
  if (found.length > 0) remember(file, scope, found);
  return problems;
}

function knownValid(file: string | null, scope: CacheScope): Set<string> {
  const id = `${file}\0${cacheTrustId(scope)}`;
  let set = known.get(id);
  if (!set) {
    set = new Set(readSchemas(file, scope));
    known.set(id, set);
  }
  return set;
}

/** The schema texts `file` holds when its signature matches (layout: signature line, then the JSON). */
function readSchemas(file: string | null, scope: CacheScope): string[] {
  const read = file === null ? undefined : readCacheFile(file);
  if (!read) return [];
  try {
    const text = read.bytes.toString("utf8");
    const newline = text.indexOf("\n");
    if (newline < 0 || !signatureMatches(scope, text.slice(0, newline), FORMAT_VERSION, text.slice(newline + 1))) return [];
    const data = JSON.parse(text.slice(newline + 1)) as { format?: unknown; valid?: unknown };
    if (data.format !== FORMAT_VERSION || !Array.isArray(data.valid)) return [];
    return data.valid.filter((k): k is string => typeof k === "string");
  } catch {
    return [];
  }
}

/** Adds `schemas` to the known set and writes the merged set (disk version first, newest last). */
function remember(file: string | null, scope: CacheScope, schemas: string[]): void {
  const set = knownValid(file, scope);
  for (const json of schemas) set.add(json);
  if (file === null) return;
  const body = JSON.stringify({ format: FORMAT_VERSION, valid: newest([...new Set([...readSchemas(file, scope), ...set])]) });
  const signature = cacheSignature(scope, FORMAT_VERSION, body);
  if (signature === null) return;
  try {
    writeCacheFile(file, `${signature}\n${body}`);
  } catch {
    // a cache that cannot be written only costs speed
  }
}

/** The newest of `schemas` (last is newest) within MAX_ENTRIES and MAX_CHARS. */
function newest(schemas: string[]): string[] {
  const kept: string[] = [];
  let chars = 0;
  for (let i = schemas.length - 1; i >= 0 && kept.length < MAX_ENTRIES; i--) {
    chars += schemas[i].length;
    if (chars > MAX_CHARS) break;
    kept.push(schemas[i]);
  }
  return kept.reverse();
}
