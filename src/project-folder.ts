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
 * working folder, or at or below a folder holding a project marker; the home folder and the
 * folders above it never count (a dotfiles repository in home is no checkout). Compared by real path.
 */
export function insideProject(dir: string, cwd: string, home: string): boolean {
  const real = realPathOfExisting(dir);
  const realHome = realPathOfExisting(home);
  const atOrAbove = (folder: string) => realHome === folder || realHome.startsWith(folder.endsWith(sep) ? folder : folder + sep);
  const within = (folder: string) => real === folder || real.startsWith(folder.endsWith(sep) ? folder : folder + sep);
  const realCwd = realPathOfExisting(cwd);
  if (!atOrAbove(realCwd) && within(realCwd)) return true;
  for (let at = real; !atOrAbove(at); at = dirname(at)) {
    if (PROJECT_MARKERS.some((marker) => existsSync(join(at, marker)))) return true;
    if (dirname(at) === at) break;
  }
  return false;
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
