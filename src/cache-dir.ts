/**
 * Where yiem's own files are (package root) and where it keeps caches that survive between runs.
 * Cache rules (docs/performance.md, "Caches"):
 * - a cache folder is used only when owned by the current user and not writable by group or
 *   others (the package's folder and the `modules`/`specs` folders: and not a symbolic link); an
 *   untrusted package folder is replaced by the user cache folder, and yiem caches nothing when
 *   that one (or an untrusted `$YIEM_CACHE_DIR`) is not trusted;
 * - how its entries are trusted (`cacheTrust`): a cache base that only the user's own yiem writes
 *   is **owned** and its entries are used as they are: the package's own folder (whoever can write
 *   there can change yiem's code itself), and a `$YIEM_CACHE_DIR` or user cache folder outside any
 *   project (./project-folder.ts: at or below the working folder, or below a folder holding
 *   package.json, package.yaml or .git; for the user cache folder the home folder and its
 *   ancestors are not projects, for a `$YIEM_CACHE_DIR` they are judged like any folder). A
 *   `$YIEM_CACHE_DIR` inside a project (`.cache`, a CI cache under the workspace: a checkout
 *   could ship it) is **signed**: each entry carries an HMAC under a per-user key
 *   (`cacheKeyFolder()/key`, 32 random bytes, mode 0600) kept in the user cache folder, never in
 *   a project, and an entry whose HMAC does not match is ignored. A user cache folder inside a
 *   project caches nothing;
 * - every entry also holds what it stands for (a spec's path and text, a schema's JSON, a tool's
 *   path and stat), compared exactly when read: names (`nameHash`) only place entries;
 * - only regular files are read (opened non-blocking, checked with fstat), so a FIFO never blocks;
 * - entries unused for 30 days are deleted (./cache-prune.ts);
 * - every choice goes by a `CacheScope`: the caller's environment (`YIEM_CACHE_DIR`,
 *   `XDG_CACHE_HOME`, `HOME`), working folder and home. The CLI passes its io's
 *   (`cacheScopeOf(io.env, io.cwd)`); only the library entry, with no io, falls back to the
 *   process's own (`processCacheScope()`). What is remembered is keyed by those inputs.
 * Owned caches need no node:crypto at all: a warm start of `tools list` or `config` never loads it.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { randomBytesOf, randomHex } from "./random-id.js";
import {
  accessSync,
  constants,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
  type Stats,
} from "node:fs";
import { homeFolder } from "./home-folder.js";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { readRegularFileSync } from "./regular-file.js";
import { insideProject } from "./project-folder.js";
import { packageRoot } from "./package-info.js";
import { writeFileAtomicSync } from "./atomic-write.js";

/** Where a caller's caches are: its environment, working folder and home folder (module rules). */
export interface CacheScope {
  env: NodeJS.ProcessEnv;
  /** The caller's working folder (a cache at or below it is inside a project). */
  cwd: string;
  home: string;
}

/** The scope of a caller with environment `env` in folder `cwd`: the CLI's, from its io. */
export function cacheScopeOf(env: NodeJS.ProcessEnv, cwd: string): CacheScope {
  return { env, cwd, home: homeFolder(env) };
}

/** The process's own scope: for the library entry only, where no io exists. */
export function processCacheScope(): CacheScope {
  return cacheScopeOf(process.env, process.cwd());
}

/** Default cache folders by the inputs that choose them (the package folder's writability is checked once). */
const defaultCacheDirs = new Map<string, string>();

/**
 * `$YIEM_CACHE_DIR`; else `node_modules/.cache/yiem` of this package when this process may write
 * there; else (a global install owned by another user, a read-only file system)
 * `$XDG_CACHE_HOME/yiem`, or `~/.cache/yiem`. A cache that cannot be written anyway only costs
 * speed: every user of it ignores write failures. `cacheFolder` checks that it may be trusted.
 */
export function yiemCacheDir(scope: CacheScope = processCacheScope()): string {
  if (scope.env.YIEM_CACHE_DIR) return resolve(scope.cwd, scope.env.YIEM_CACHE_DIR);
  const inputs = `${scope.env.XDG_CACHE_HOME ?? ""}\0${scope.home}`;
  let dir = defaultCacheDirs.get(inputs);
  if (dir === undefined) {
    dir = defaultCacheDirFor({ packageRoot: packageRoot(), env: scope.env, home: scope.home, writable: writableOrCreatable });
    defaultCacheDirs.set(inputs, dir);
  }
  return dir;
}

/** The default cache folder (see `yiemCacheDir`), from its inputs. */
export function defaultCacheDirFor(inputs: {
  packageRoot: string;
  env: NodeJS.ProcessEnv;
  home: string;
  writable: (dir: string) => boolean;
}): string {
  const inPackage = packageCacheDirOf(inputs.packageRoot);
  if (inputs.writable(inPackage)) return inPackage;
  return userCacheDirFor(inputs.env, inputs.home) || inPackage;
}

/** The package's own cache folder: `node_modules/.cache/yiem` of the package at `root`. */
function packageCacheDirOf(root: string): string {
  return join(root, "node_modules", ".cache", "yiem");
}

/**
 * `$XDG_CACHE_HOME/yiem`, or `~/.cache/yiem`; "" when there is none: no home known and no
 * absolute `XDG_CACHE_HOME` (a relative one is ignored, as the XDG rules say; it would name a
 * folder of whatever the working folder is).
 */
function userCacheDirFor(env: NodeJS.ProcessEnv, home: string): string {
  if (env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME)) return join(env.XDG_CACHE_HOME, "yiem");
  return isAbsolute(home) ? join(home, ".cache", "yiem") : "";
}

/** Whether `dir` exists and is writable, or its nearest existing ancestor is. */
function writableOrCreatable(dir: string): boolean {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(at)) {
      try {
        accessSync(at, constants.W_OK);
        return true;
      } catch {
        return false;
      }
    }
    if (dirname(at) === at) return false;
  }
}

/** Whether a cache folder may be used: a folder owned by `uid`, not writable by group or others. */
export function trustedCacheFolder(stats: Pick<Stats, "uid" | "mode" | "isDirectory"> | undefined, uid: number | undefined): boolean {
  if (!stats?.isDirectory()) return false;
  if (uid === undefined) return true; // no POSIX owners (Windows)
  return stats.uid === uid && (stats.mode & 0o022) === 0;
}

/**
 * `dir`, created (mode 0700) when missing, if it is a trusted cache folder; else null. With
 * `followLink` false, a symbolic link there is not trusted (yiem's own folders are never links).
 */
function trustedFolder(dir: string, followLink = true): string | null {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return trustedCacheFolder(followLink ? statSync(dir) : lstatSync(dir), process.getuid?.()) ? dir : null;
  } catch {
    return null;
  }
}

/** Trusted base folders by the inputs of `cacheBaseFor` (chosen, explicit, user). */
const trustedBases = new Map<string, string | null>();

/** The trusted cache base folder of `scope` (see `cacheBaseFor`), or null. */
function cacheBase(scope: CacheScope): string | null {
  const chosen = yiemCacheDir(scope);
  const user = userCacheDirFor(scope.env, scope.home);
  const explicit = Boolean(scope.env.YIEM_CACHE_DIR);
  const inputs = `${chosen}\0${user}\0${explicit}`;
  let base = trustedBases.get(inputs);
  if (base === undefined) {
    // The package's own folder may not be a link (a checkout could point it anywhere); a folder the
    // user names, or the user cache folder, may.
    const trusted = (dir: string) => trustedFolder(dir, explicit || dir === user) !== null;
    base = cacheBaseFor({ chosen, explicit, user, trusted });
    trustedBases.set(inputs, base);
  }
  return base;
}

/**
 * The cache base folder: `chosen` (`yiemCacheDir()`) when trusted; else, unless the user chose it
 * (`$YIEM_CACHE_DIR`: yiem does not write elsewhere instead), the user cache folder when trusted;
 * else null (no caching).
 */
export function cacheBaseFor(inputs: { chosen: string; explicit: boolean; user: string; trusted: (dir: string) => boolean }): string | null {
  if (inputs.trusted(inputs.chosen)) return inputs.chosen;
  if (inputs.explicit || inputs.user === "" || inputs.user === inputs.chosen) return null;
  return inputs.trusted(inputs.user) ? inputs.user : null;
}

/**
 * How the entries of `scope`'s cache are trusted (module rules): "owned" (used as they are), the
 * key that signs them, or null (nothing is cached).
 */
export type CacheTrust = "owned" | Buffer | null;

/** `cacheTrust` by its inputs: each answer may walk folders (real paths, a stat per project marker). */
const trusts = new Map<string, CacheTrust>();

/** How the entries of `scope`'s cache base are trusted (module rules). */
export function cacheTrust(scope: CacheScope = processCacheScope()): CacheTrust {
  const base = cacheBase(scope);
  if (base === null) return null;
  const explicit = scope.env.YIEM_CACHE_DIR;
  const inputs = `${base}\0${explicit ?? ""}\0${scope.env.XDG_CACHE_HOME ?? ""}\0${scope.cwd}\0${scope.home}`;
  let trust = trusts.get(inputs);
  if (trust === undefined) {
    trust = trustOf(base, explicit !== undefined && explicit !== "", scope);
    trusts.set(inputs, trust);
  }
  return trust;
}

function trustOf(base: string, explicit: boolean, scope: CacheScope): CacheTrust {
  return cacheTrustFor({
    base,
    explicit,
    packageCache: packageCacheDirOf(packageRoot()),
    inProject: (dir, chosen) => insideProject(dir, scope.cwd, scope.home, { chosen }),
    key: () => cacheKey(scope),
  });
}

/**
 * The trust of the cache base `base` (module rules): the package's own folder (`packageCache`,
 * not a link: checked by `cacheBase`) is owned, as trusted as yiem's code; so is any base outside
 * a project (`inProject(dir, chosen)`: a chosen base is judged strictly); a chosen base
 * (`explicit`: `$YIEM_CACHE_DIR`) inside one is signed with `key()`; the user cache folder inside
 * one caches nothing.
 */
export function cacheTrustFor(inputs: { base: string; explicit: boolean; packageCache: string; inProject: (dir: string, chosen: boolean) => boolean; key: () => Buffer | null }): CacheTrust {
  if (!inputs.explicit && inputs.base === inputs.packageCache) return "owned";
  if (!inputs.inProject(inputs.base, inputs.explicit)) return "owned";
  return inputs.explicit ? inputs.key() : null;
}

/**
 * What decides how `scope`'s entries are read (its trust and, when signed, its key folder), as a
 * string: a memo of entries read (a pack, the schema list) must be kept per this, not per file,
 * since one folder can be owned from one working folder and signed from another.
 */
export function cacheTrustId(scope: CacheScope): string {
  const trust = cacheTrust(scope);
  return trust === null ? "none" : trust === "owned" ? "owned" : `signed:${cacheKeyFolder(scope)}`;
}

const trustedSubfolders = new Map<string, string | null>();

/** The trusted cache folder `name` (`specs`, `modules`, `schemas`, `code`), created when missing; null: cache nothing. */
export function cacheFolder(name: string, scope: CacheScope = processCacheScope()): string | null {
  const base = cacheBase(scope);
  if (base === null || cacheTrust(scope) === null) return null;
  const dir = join(base, name);
  let trusted = trustedSubfolders.get(dir);
  if (trusted === undefined) {
    trusted = trustedFolder(dir, false);
    trustedSubfolders.set(dir, trusted);
  }
  return trusted;
}

/**
 * The folder of the per-user key that signs the entries of a cache inside a project: the user
 * cache folder, or null when that one is inside a project too (then such a cache caches nothing).
 * Never the package's own folder, nor a project's, which a checkout could ship (rules above).
 */
export function cacheKeyFolder(scope: CacheScope = processCacheScope()): string | null {
  const user = userCacheDirFor(scope.env, scope.home);
  const inputs = `${user}\0${scope.cwd}\0${scope.home}`;
  let folder = keyFolders.get(inputs);
  if (folder === undefined) {
    folder = user === "" || insideProject(user, scope.cwd, scope.home) ? null : user;
    keyFolders.set(inputs, folder);
  }
  return folder;
}

/** `cacheKeyFolder` by its inputs. */
const keyFolders = new Map<string, string | null>();

const keys = new Map<string, Buffer | null>();

/** The per-user secret of cache HMACs (read, or made once); null when no trusted place holds one. */
function cacheKey(scope: CacheScope): Buffer | null {
  const folder = cacheKeyFolder(scope);
  if (folder === null) return null;
  let key = keys.get(folder);
  if (key === undefined) {
    key = trustedFolder(folder) === null ? null : readOrMakeKey(join(folder, "key"));
    keys.set(folder, key);
  }
  return key;
}

const KEY_BYTES = 32;

function readOrMakeKey(file: string): Buffer | null {
  const existing = readKey(file);
  if (existing) return existing;
  const temp = `${file}.${process.pid}.${randomHex(6)}.tmp`;
  try {
    writeFileSync(temp, randomBytesOf(KEY_BYTES), { flag: "wx", mode: 0o600 });
    try {
      linkSync(temp, file); // atomic, and never replaces a key another process just made
    } catch (error) {
      // An unusable key is replaced; so is any key where hard links are not supported (a race then
      // only costs the other process its cache entries).
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || !readKey(file)) renameSync(temp, file);
    }
    return readKey(file);
  } catch {
    return null;
  } finally {
    try {
      unlinkSync(temp);
    } catch {
      // already renamed, or never written
    }
  }
}

/** The key in `file` when it is a regular file of the current user, mode 0600 or stricter, of the right size. */
function readKey(file: string): Buffer | null {
  const read = readCacheFile(file);
  if (!read || read.bytes.length !== KEY_BYTES) return null;
  const uid = process.getuid?.();
  if (uid !== undefined && (read.stats.uid !== uid || (read.stats.mode & 0o077) !== 0)) return null;
  return read.bytes;
}

/** The signature an owned cache's entries carry in place of an HMAC. */
export const UNSIGNED = "-";

/**
 * The signature of an entry made of `parts` in `scope`'s cache: UNSIGNED when the cache is owned,
 * else the hex HMAC-SHA256 of the parts (each ended by NUL) under the per-user key; null when
 * nothing is cached.
 */
export function cacheSignature(scope: CacheScope, ...parts: (string | Uint8Array)[]): string | null {
  const trust = cacheTrust(scope);
  if (trust === null || trust === "owned") return trust === null ? null : UNSIGNED;
  const hmac = createHmac("sha256", trust);
  for (const part of parts) hmac.update(part).update("\0");
  return hmac.digest("hex");
}

/** Whether `signature`, read from an entry made of `parts`, may be trusted in `scope`'s cache (any, when owned). */
export function signatureMatches(scope: CacheScope, signature: string, ...parts: (string | Uint8Array)[]): boolean {
  const trust = cacheTrust(scope);
  if (trust === null) return false;
  if (trust === "owned") return true;
  const expected = cacheSignature(scope, ...parts);
  return expected !== null && expected.length === signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(signature));
}

/**
 * The bytes and stats of the cache file `file`, or undefined when it is missing, unreadable or not
 * a regular file (opened non-blocking: a FIFO is refused, never waited on). With `reuse` large
 * enough, the bytes are a view of it (../regular-file.ts).
 */
export function readCacheFile(file: string, reuse?: Buffer): { bytes: Buffer; stats: Stats } | undefined {
  try {
    const read = readRegularFileSync(file, undefined, reuse);
    return "bytes" in read ? read : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes `text` to `file` atomically (../atomic-write.ts), mode 0600, through a temp file named
 * `<file>.<pid>.<random>.tmp`, the name `pruneCacheFolder` knows as a leftover. Not flushed unless
 * `flush`: an entry torn by a crash is one its reader rejects (malformed JSON, a wrong length, a
 * signature); one whose reader could not tell (the code cache, given to V8) is flushed. Throws.
 */
export function writeCacheFile(file: string, text: string | Buffer, options: { flush?: boolean } = {}): void {
  writeFileAtomicSync(file, text, { mode: 0o600, flush: options.flush ?? false, temp: `${file}.${process.pid}.${randomHex(6)}.tmp` });
}
