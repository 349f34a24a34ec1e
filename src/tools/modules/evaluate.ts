/**
 * Evaluating module files. Rules:
 * - TypeScript and ES-module JavaScript are transformed to CommonJS (cached on disk by content)
 *   and run as the body of an async function compiled with the original file name, so stack
 *   traces and syntax errors name file:line and top-level `await` works;
 * - CommonJS files (`.cjs`, `.js` without import/export) run untransformed in Node's classic
 *   wrapper; `.json` is parsed;
 * - one evaluation per (path, content) per process: a file whose content changed is evaluated
 *   fresh; a failed evaluation is forgotten, so the next import retries. Content is re-read on
 *   every import, except that a file read once stays trusted until the microtask queue drains
 *   (one burst of loads, e.g. 500 tools sharing one helper, reads it once), and a cached module
 *   whose file's stat is unchanged since it was cached is not read at all (cache.ts);
 * - a static import gets a module only once its synchronous part has run (see importer.ts for
 *   top-level await); a cycle gets the exports as far as they are (CommonJS semantics).
 */
import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { Script } from "node:vm";
import { cacheKey, noteSourceStat, readCachedCode, readCachedIfUnchanged, statSignature, writeCachedCode } from "./cache.js";
import type { CacheScope } from "../../cache-dir.js";
import { createImporter, type Evaluator } from "./importer.js";
import { moduleFormat } from "./resolve.js";
import { IMPORT_IDENTIFIER, META_IDENTIFIER, transformSource, withLocation } from "./transform.js";

type ModuleState = "evaluating" | "suspended" | "done";

interface ModuleRecord {
  path: string;
  /** `cacheKey` of the path and content evaluated. */
  key: string;
  module: { exports: unknown; id: string; filename: string; path: string; loaded: boolean; require: NodeRequire };
  state: ModuleState;
  /** Settles when the evaluation (including any top-level await) has finished. */
  completion: Promise<void>;
}

const records = new Map<string, ModuleRecord>();

// The async wrapper is part of the cached code: bump FORMAT_VERSION in cache.ts when it changes.
const ASYNC_HEADER = `(async function (exports, require, module, __filename, __dirname, ${META_IDENTIFIER}, ${IMPORT_IDENTIFIER}, __yiemEnd) {"use strict";try {`;
const ASYNC_FOOTER = "\n;__yiemEnd();} catch (__yiemError) {__yiemEnd(__yiemError); throw __yiemError;}\n})";
const CJS_HEADER = "(function (exports, require, module, __filename, __dirname) {";
const CJS_FOOTER = "\n})";

/** The wrapped, transformed code of an ES module or TypeScript file, from the disk cache when possible. */
function moduleCode(path: string, source: string, key: string, typescript: boolean, stat: string | null, scope: CacheScope): string {
  const cached = readCachedCode(path, key, scope);
  if (cached !== null) {
    noteSourceStat(path, key, stat, scope);
    return cached;
  }
  const code = ASYNC_HEADER + transformSource(source, path, { typescript, imports: true }) + ASYNC_FOOTER;
  writeCachedCode(path, key, code, stat, scope);
  return code;
}

/** The text of the file at `path` and the stat signature it had when read (cache.ts). */
function readSource(path: string): { text: string; stat: string | null } {
  const readAt = Date.now();
  const fd = openSync(path, "r");
  try {
    const stats = fstatSync(fd);
    return { text: readFileSync(fd, "utf8"), stat: statSignature(stats, readAt) };
  } finally {
    closeSync(fd);
  }
}

/** Compiles `code` (whose first `headerLength` characters are wrapper) as a script named `path`. */
function compile(path: string, code: string, headerLength: number): (...args: unknown[]) => unknown {
  let script: Script;
  try {
    script = new Script(code, { filename: path, columnOffset: -headerLength });
  } catch (error) {
    throw withLocation(error, path, headerLength);
  }
  return script.runInThisContext() as (...args: unknown[]) => unknown;
}

/** Strips a byte-order mark and turns a leading `#!` line into a comment (same length). */
function normalizeSource(text: string): string {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return source.startsWith("#!") ? `//${source.slice(2)}` : source;
}

/** Paths whose record was checked against the disk since the microtask queue last drained. */
const checkedThisTurn = new Set<string>();

/**
 * Starts (or reuses) the evaluation of the file at absolute `path`; returns after its synchronous
 * part. The transformed code is cached in `scope`'s cache, and so are the modules it imports.
 */
export function instantiate(path: string, scope: CacheScope): ModuleRecord {
  const existing = records.get(path);
  if (existing && checkedThisTurn.has(path)) return existing;
  // A transformed module whose file is unchanged since it was cached (by stat) is not read again.
  const unchanged = readCachedIfUnchanged(path, scope);
  let source = "";
  let stat: string | null = null;
  let key: string;
  if (unchanged) key = unchanged.key;
  else {
    const read = readSource(path);
    source = normalizeSource(read.text);
    stat = read.stat;
    key = cacheKey(path, source);
  }
  if (checkedThisTurn.size === 0) queueMicrotask(() => checkedThisTurn.clear());
  checkedThisTurn.add(path);
  if (existing && existing.key === key) return existing;
  const dir = dirname(path);
  const { require, meta, dynamicImport } = createImporter(path, evaluatorFor(scope));
  const module = { exports: {} as unknown, id: path, filename: path, path: dir, loaded: false, require };
  const record: ModuleRecord = { path, key, module, state: "evaluating", completion: Promise.resolve() };
  records.set(path, record);
  const forget = () => {
    if (records.get(path) === record) records.delete(path);
  };
  try {
    const format = unchanged ? "javascript" : moduleFormat(path, source); // unchanged: already transformed
    if (format === "json") {
      module.exports = JSON.parse(source);
    } else if (format === "commonjs") {
      compile(path, CJS_HEADER + source + CJS_FOOTER, CJS_HEADER.length).call(module.exports, module.exports, require, module, path, dir);
    } else {
      let syncError: { error: unknown } | undefined;
      let finished = false;
      const end = (...failure: unknown[]) => {
        if (failure.length) syncError ??= { error: failure[0] };
        else finished = true;
      };
      const code = unchanged ? unchanged.code : moduleCode(path, source, key, format === "typescript", stat, scope);
      const fn = compile(path, code, ASYNC_HEADER.length);
      const promise = fn.call(undefined, module.exports, require, module, path, dir, meta, dynamicImport, end) as Promise<void>;
      if (syncError) {
        promise.catch(() => {});
        throw syncError.error;
      }
      if (!finished) {
        record.state = "suspended";
        record.completion = promise.then(() => {
          record.state = "done";
          module.loaded = true;
        }, (error: unknown) => {
          forget();
          throw error;
        });
        record.completion.catch(() => {});
        return record;
      }
    }
  } catch (error) {
    forget();
    throw error;
  }
  record.state = "done";
  module.loaded = true;
  return record;
}

/** Evaluates the file at absolute `path` completely (awaiting top-level await); its exports. */
export async function evaluateFile(path: string, scope: CacheScope): Promise<unknown> {
  const record = instantiate(path, scope);
  await record.completion;
  return record.module.exports;
}

/** The evaluator a module's imports go through: the same cache scope as the module's. */
function evaluatorFor(scope: CacheScope): Evaluator {
  return { instantiate: (path) => instantiate(path, scope), evaluate: (path) => evaluateFile(path, scope) };
}
