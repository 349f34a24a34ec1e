/**
 * Finding the spec file, without running any code. yiem searches itself rather than through
 * cosmiconfig: `cosmiconfig()` always first reads a "meta config" of the working folder
 * (`.config/config.{json,yaml,js,ts,…}`, package.json#cosmiconfig), runs JavaScript ones and lets
 * them swap the search places, and no option turns that off. Rules (docs/spec.md):
 * - from `cwd` upward, each folder tries SEARCH_PLACES in order; the first spec found wins;
 * - the search ends after the project root (the first folder holding package.json, package.yaml
 *   or .git) or after the home folder (compared by real path, so a `$HOME` reached through a link
 *   stops it too), whichever comes first; the file-system root is never searched;
 * - a folder above `cwd` is searched only when it is owned by the current user or root and is not
 *   writable by everyone; an untrusted folder ends the search before it;
 * - a spec found in a folder writable by group or others (`/tmp`) must belong to the current user
 *   or root; another user's is an error (it may have been planted), unless named with `-c`; the
 *   same holds for every symbolic link on the way to it, judged by the link's own owner
 *   (../planted-path.ts): a link another user planted is refused like a file;
 * - a spec must be a regular file: a FIFO, socket or device is an error and is never read; a
 *   folder of that name is skipped; an existing file counts even when empty; package.json counts
 *   only with a `yiem` property;
 * - `-c` names exactly one file (same regular-file rule, no search).
 */
import { existsSync, realpathSync, statSync, type Stats } from "node:fs";
import { homeFolder } from "../home-folder.js";
import path from "node:path";
import { mayBePlanted, plantedOnTheWay, plantedReason } from "../planted-path.js";
import { readRegularFileSync } from "../regular-file.js";
import { packageRoot } from "../package-info.js";
import { ConfigError, displayPath } from "./errors.js";
import { parseSpecText, type ParsedSpecFile, type SpecCacheUse } from "./parse.js";

export const SEARCH_PLACES = [
  "agent.config.yaml",
  "agent.config.yml",
  "agent.config.json",
  ".yiemrc",
  ".yiemrc.yaml",
  ".yiemrc.json",
  "package.json",
] as const;

/** A folder holding one of these is a project root: the search ends there. */
const PROJECT_MARKERS = ["package.json", "package.yaml", ".git"];

/** Where a search ends besides the project root, and the spec cache it uses. */
export interface SpecSearchOptions {
  /** The home folder (the CLI's from its io.env, ../home-folder.ts); default the process's (the library entry); "" none. */
  home?: string;
  cache?: SpecCacheUse;
}

/** Search from `cwd` upward (rules above); null when no spec exists. `home` ends the search too. */
export async function findSpecFile(cwd: string, options: SpecSearchOptions = {}): Promise<ParsedSpecFile | null> {
  const { home = homeFolder(process.env), cache } = options;
  const start = path.resolve(cwd);
  for (const dir of searchFolders(start, home ? realPath(path.resolve(home)) : undefined)) {
    for (const place of SEARCH_PLACES) {
      const file = path.join(dir, place);
      const text = readSpecText(file, start, true);
      if (text === undefined) continue;
      const parsed = text.trim() === "" ? emptySpec(file) : await parseSpecText(file, text, start, cache);
      if (place === "package.json" && parsed.value === null) continue;
      return parsed;
    }
  }
  return null;
}

/** Load exactly `file` (relative to cwd), as `-c/--config` asks. */
export async function readSpecFile(file: string, cwd: string, cache?: SpecCacheUse): Promise<ParsedSpecFile> {
  const absolute = path.resolve(cwd, file);
  const text = readSpecText(absolute, cwd, false) ?? "";
  return text.trim() === "" ? emptySpec(absolute) : parseSpecText(absolute, text, cwd, cache);
}

/** The folders to search, nearest first (rules above). */
export function* searchFolders(start: string, home: string | undefined): Generator<string> {
  const uid = process.getuid?.();
  for (let dir = start; path.dirname(dir) !== dir; ) {
    yield dir;
    if ((home !== undefined && realPath(dir) === home) || PROJECT_MARKERS.some((marker) => existsSync(path.join(dir, marker)))) return;
    const parent = path.dirname(dir);
    if (!searchableFolder(statSync(parent, { throwIfNoEntry: false }), uid)) return;
    dir = parent;
  }
}

/** The real path of `dir` (links resolved), or `dir` itself when it cannot be resolved. */
function realPath(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}

/** Whether a folder above the start may be searched: owned by `uid` or root, not writable by everyone. */
export function searchableFolder(stats: Pick<Stats, "uid" | "mode" | "isDirectory"> | undefined, uid: number | undefined): boolean {
  if (!stats?.isDirectory()) return false;
  if (uid === undefined) return true; // no POSIX owners (Windows)
  return (stats.uid === uid || stats.uid === 0) && (stats.mode & 0o002) === 0;
}

/**
 * For a `-c` file that is not found: where the yiem package has an example spec of that name
 * (its configs/), and how to copy them all; "" when it has none.
 */
function packageExampleHint(file: string): string {
  const example = path.join(packageRoot(), "configs", path.basename(file));
  if (!/\.ya?ml$/.test(file) || example === file || !existsSync(example)) return "";
  return `; the yiem package has an example of that name: ${example} (yiem init --example copies the example specs into a folder)`;
}

/**
 * The text of the spec file `file`, refusing anything but a regular file without blocking on it
 * (opened non-blocking, checked with fstat). In a search (`missingOk`), a missing file or a folder
 * gives undefined; otherwise those are errors too.
 */
function readSpecText(file: string, cwd: string, missingOk: boolean): string | undefined {
  const fail = (reason: string) => new ConfigError(`config file ${displayPath(file, cwd)} ${reason}`, { file, key: missingOk ? undefined : "--config" });
  const planted = (reason: string) => fail(`${reason}; yiem does not use it unless named with -c`);
  // Every link on the way is judged by its own owner before anything is opened through it.
  const link = missingOk ? plantedOnTheWay(file) : null;
  if (link) throw planted(plantedReason(link, file));
  const refusePlanted = (stats: Stats) => {
    if (missingOk && mayBePlanted(stats, statSync(path.dirname(file), { throwIfNoEntry: false }), process.getuid?.())) {
      throw planted(plantedReason({ path: file, uid: stats.uid, link: false }, file));
    }
  };
  let read: ReturnType<typeof readRegularFileSync>;
  try {
    read = readRegularFileSync(file, refusePlanted);
  } catch (error) {
    const { code, syscall } = error as NodeJS.ErrnoException;
    if (syscall !== "open") throw error;
    if (code === "ENOENT" || code === "ENOTDIR") {
      if (missingOk) return undefined;
      throw fail(`not found${packageExampleHint(file)}`);
    }
    if (code === "EISDIR") {
      if (missingOk) return undefined;
      throw fail("is a folder");
    }
    if (code === "ENXIO") throw fail("is not a regular file (a socket)");
    throw fail(`cannot be read (${code})`);
  }
  if ("bytes" in read) return read.bytes.toString("utf8");
  if (!read.stats.isDirectory()) throw fail(`is not a regular file (${read.kind})`);
  if (missingOk) return undefined;
  throw fail("is a folder");
}

export { mayBePlanted };

function emptySpec(file: string): ParsedSpecFile {
  return { file, value: null, lineOf: () => undefined };
}
