/**
 * Loading yiem's CommonJS bundles (dist/bundle/yiem.cjs and dist/bundle/vendor/*.cjs, built by
 * scripts/bundle.mjs) with a V8 code cache, so a warm start deserializes compiled code instead of
 * parsing and compiling ~1 MB of JavaScript (docs/performance.md, "The code cache"). Rules:
 * - a bundle is compiled as one `vm.Script` in Node's CommonJS wrapper and registered in
 *   `require.cache` under its own file name before it runs: `require` of that file anywhere (the
 *   library entry, a tool's `yiem`) gets this very instance, so there is one copy of every module;
 * - its cached data is one entry per command of the trusted cache folder `code`
 *   (src/cache-dir.ts), named by the bundle's content hash (from the build), the Node version,
 *   `process.arch` and the command word (`useCodeCacheOf`, src/cli/command-word.ts; `nameHash`), and signed with
 *   the per-user HMAC key
 *   when the cache is a signed one (an owned cache's entries carry UNSIGNED). V8 checks its own
 *   version, the source's length, the data's length and every other flag (`node --…`,
 *   `NODE_OPTIONS`) itself: an entry that is missing, not a regular file, wrongly signed, or that
 *   V8 rejects (`cachedDataRejected`) is ignored, and rewritten by `saveCodeCaches`. V8 does not
 *   check the data's bytes (a flipped byte is deserialised as it is), so every entry also
 *   carries the data's checksum (./checksum.ts), checked before V8 sees the data, and is
 *   flushed to disk before it is renamed into place. Node's own options (`--cpu-prof`,
 *   `--import`) are not part of the name, so they do not make the cache cold;
 * - `saveCodeCaches()` runs after the command: `createCachedData()` then holds every function
 *   the command compiled. It writes an entry that was missing or rejected, atomically. One entry
 *   per command, not one for all: V8 deserialises all of an entry, and one that had gathered what
 *   every command compiled cost `tools list` ~40% more to load (docs/performance.md);
 * - with source maps enabled (`--debug`) a bundle is loaded with plain `require`, so Node maps its
 *   stack traces to src/; no code cache then;
 * - code in such a script must not call `import()` itself (see src/dynamic-import.ts);
 * - a bundle is ASCII (scripts/bundle.mjs checks it), so its bytes are its characters.
 */
import Module, { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { Script } from "node:vm";
import { closeSync, fstatSync, openSync, statSync } from "node:fs";
import { readWhole } from "./regular-file.js";
import { cacheFolder, cacheSignature, processCacheScope, readCacheFile, signatureMatches, writeCacheFile } from "./cache-dir.js";
import { noteUsed, pruneCacheFolder } from "./cache-prune.js";
import { checksum, checksumBuffer } from "./checksum.js";
import { nameHash } from "./name-hash.js";

const requireHere = createRequire(import.meta.url);

/** The first line of an entry: this tag, the signature, the data's checksum (16 hex digits) and the key (`entryKey`), then the cached data. */
const ENTRY_TAG = "yiem-code-cache-3";
const COMMAND_NAME = /^[a-z][a-z0-9-]{0,31}$/;

interface LoadedScript {
  script: Script;
  /** The entry's path, or null when there is no trusted cache folder. */
  entry: string | null;
  /** What the entry stands for (`entryKey`). */
  key: string;
  /** Whether V8 took the entry's data (else the entry is written after the command). */
  accepted: boolean;
}

const loadedScripts: LoadedScript[] = [];
/** The content hash of each bundle loaded, by file name (`yiem.cjs`). */
const loadedHashes = new Map<string, string>();

/**
 * The content hash (from the build) of the bundle `name` (`yiem.cjs`) when this process loaded
 * it; undefined otherwise (yiem running from src/, as in the tests): what caches of its own
 * results are keyed by (../cli/parse-cache.ts).
 */
export function loadedBundleHash(name: string): string | undefined {
  return loadedHashes.get(name);
}

/** The command whose entries this process reads and writes (`useCodeCacheOf`). */
let command = "other";

/**
 * Names the command (its command word: `run`, `tools`; anything else is `other`) whose entries
 * the bundles loaded from now on use. bin/yiem.js calls it before loading yiem.
 */
export function useCodeCacheOf(word: string): void {
  command = COMMAND_NAME.test(word) ? word : "other";
}

/** The name of the cache entry of a bundle with content hash `contentHash`, under the current settings. */
export function codeCacheEntryName(contentHash: string): string {
  return `${nameHash(ENTRY_TAG, entryKey(contentHash))}.code`;
}

/** What an entry stands for, kept in its first line and compared exactly (the name only places it): the bundle's content hash, Node's version, the arch and the command. */
function entryKey(contentHash: string): string {
  return [contentHash, process.version, process.arch, command].join(",");
}

/**
 * The exports of the CommonJS bundle `file` (whose content hash the build recorded), compiled
 * with its code cache when there is a valid one (rules above). A second call, or a `require` of
 * the file before, gives the instance already loaded.
 */
export function loadBundle(file: string, contentHash: string): unknown {
  const existing = requireHere.cache[file];
  if (existing) return existing.exports;
  loadedHashes.set(basename(file), contentHash);
  if (process.sourceMapsEnabled) return requireHere(file);
  // Read as Latin-1: the bundles are ASCII (the build checks), and decoding UTF-8 costs a
  // 0.65 MB bundle ~5 ms and ~150 more page faults than copying bytes (docs/performance.md).
  const folder = cacheFolder("code");
  const entry = folder === null ? null : join(folder, codeCacheEntryName(contentHash));
  const key = entryKey(contentHash);
  // One buffer for the source and then the entry (the source is decoded by then), as large as
  // the larger: a start touches ~0.5 MB less fresh memory, ~2 ms of page faults here
  // (docs/performance.md, "Tenth pass").
  const { bytes, buffer } = readBundle(file, entry === null ? 0 : (statSync(entry, { throwIfNoEntry: false })?.size ?? 0));
  const source = bytes.toString("latin1");
  const cached = entry === null ? undefined : readEntry(entry, key, buffer);
  const script = new Script(Module.wrap(source), { filename: file, cachedData: cached?.data });
  const accepted = cached !== undefined && !script.cachedDataRejected;
  loadedScripts.push({ script, entry, key, accepted });
  const module = new Module(file, requireHere.main);
  module.filename = file;
  module.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(dirname(file));
  requireHere.cache[file] = module;
  try {
    const wrapper = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string) => void;
    wrapper.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  } catch (error) {
    delete requireHere.cache[file];
    throw error;
  }
  module.loaded = true;
  return module.exports;
}

/**
 * Writes the code cache of every bundle loaded so far whose entry was missing or rejected (rules
 * above). Never throws: a cache that cannot be written only costs the next start its speed.
 */
export function saveCodeCaches(): void {
  for (const loaded of loadedScripts.splice(0)) {
    if (loaded.entry === null || loaded.accepted) continue;
    try {
      writeEntry(loaded.entry, loaded.key, loaded.script.createCachedData());
      pruneCacheFolder(dirname(loaded.entry));
    } catch {
      // no cache written: the next start compiles again
    }
  }
}

/** What an entry's signature covers: its tag, name, key and data. */
function signedParts(entry: string, key: string, data: Uint8Array): (string | Uint8Array)[] {
  return [ENTRY_TAG, basename(entry), key, data];
}

function writeEntry(entry: string, key: string, data: Buffer): void {
  const signature = cacheSignature(processCacheScope(), ...signedParts(entry, key, data));
  if (signature === null) return;
  writeCacheFile(entry, Buffer.concat([Buffer.from(`${ENTRY_TAG} ${signature} ${checksum(data)} ${key}\n`), data]), { flush: true });
}

/** The bytes of the bundle `file`, read into a new `buffer` of at least `atLeast` bytes (for `readEntry` to reuse). */
function readBundle(file: string, atLeast: number): { bytes: Buffer; buffer: Buffer } {
  const fd = openSync(file, "r");
  try {
    const size = fstatSync(fd).size;
    // In the checksum's memory: the entry read into it is checked where it lies (./checksum.ts).
    const buffer = checksumBuffer(Math.max(size, atLeast));
    return { bytes: readWhole(fd, size, buffer), buffer };
  } finally {
    closeSync(fd);
  }
}

/** The cached data of `entry` (read into `reuse` when it is large enough) when it is a regular file with a valid signature; else undefined. */
function readEntry(entry: string, key: string, reuse?: Buffer): { data: Buffer } | undefined {
  const read = readCacheFile(entry, reuse);
  if (!read) return undefined;
  const end = read.bytes.indexOf(0x0a);
  if (end < 0 || end > 1024) return undefined;
  const [tag, signature, sum, stored, extra] = read.bytes.subarray(0, end).toString("latin1").split(" ");
  if (tag !== ENTRY_TAG || !signature || stored !== key || extra !== undefined) return undefined;
  const data = read.bytes.subarray(end + 1);
  if (sum !== checksum(data) || !signatureMatches(processCacheScope(), signature, ...signedParts(entry, key, data))) return undefined;
  noteUsed(entry, read.stats);
  return { data };
}
