/**
 * Which folders a checkout could have shipped (src/cache-dir.ts trusts no cache key there, and
 * signs the entries of a cache kept there). One rule: `insideProject`.
 */
import { existsSync, realpathSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";

/** Files that make a folder a project root (as for the spec search). */
const PROJECT_MARKERS = ["package.json", "package.yaml", ".git"];

/**
 * Whether `dir` (absolute) is inside a project a checkout could have shipped: at or below the
 * working folder, or at or below a folder holding a project marker. Compared by real path. The
 * home folder and the folders above it do not count (a dotfiles repository in home is no
 * checkout), except for a folder the user chose (`chosen`: `$YIEM_CACHE_DIR`), which is judged
 * strictly: at or below the working folder even when that is home, and any marker up to the
 * root. An empty `home` (none known) is no home: nothing is exempt.
 */
export function insideProject(dir: string, cwd: string, home: string, options: { chosen?: boolean } = {}): boolean {
  const real = realPathOfExisting(dir);
  const realHome = home === "" ? null : realPathOfExisting(home);
  // The home folder, and each folder it is in, is exempt (rules above).
  const exempt = (folder: string) => !options.chosen && realHome !== null && atOrBelow(realHome, folder);
  const realCwd = realPathOfExisting(cwd);
  if (!exempt(realCwd) && atOrBelow(real, realCwd)) return true;
  for (let at = real; !exempt(at); at = dirname(at)) {
    if (PROJECT_MARKERS.some((marker) => existsSync(join(at, marker)))) return true;
    if (dirname(at) === at) break;
  }
  return false;
}

/** Whether the path `path` is `folder` or inside it (both absolute, compared as strings). */
function atOrBelow(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}

/** The real path of `path`: that of its nearest existing ancestor, with the missing rest appended. */
function realPathOfExisting(path: string): string {
  const missing: string[] = [];
  for (let at = resolve(path); ; at = dirname(at)) {
    try {
      return join(realpathSync(at), ...missing.reverse());
    } catch {
      if (dirname(at) === at) return resolve(path);
      missing.push(basename(at));
    }
  }
}
