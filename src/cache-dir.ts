/** Where yiem's own files are (package root) and where it keeps caches that survive between runs. */
import { accessSync, constants, existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let root: string | undefined;

/**
 * This package's root: the nearest folder above this module that holds a package.json. The same
 * from src/ (tests) and dist/ (what the CLI runs).
 */
export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  root = dir;
  return root;
}

let defaultCacheDir: string | undefined;

/**
 * `$YIEM_CACHE_DIR`; else `node_modules/.cache/yiem` of this package when this process may write
 * there; else (a global install owned by another user, a read-only file system)
 * `$XDG_CACHE_HOME/yiem`, or `~/.cache/yiem`. A cache that cannot be written anyway only costs
 * speed: every user of it ignores write failures.
 */
export function yiemCacheDir(): string {
  if (process.env.YIEM_CACHE_DIR) return process.env.YIEM_CACHE_DIR;
  defaultCacheDir ??= chooseDefaultCacheDir();
  return defaultCacheDir;
}

function chooseDefaultCacheDir(): string {
  return defaultCacheDirFor({ packageRoot: packageRoot(), env: process.env, home: homedir(), writable: writableOrCreatable });
}

/** The default cache folder (see `yiemCacheDir`), from its inputs. */
export function defaultCacheDirFor(inputs: {
  packageRoot: string;
  env: NodeJS.ProcessEnv;
  home: string;
  writable: (dir: string) => boolean;
}): string {
  const inPackage = join(inputs.packageRoot, "node_modules", ".cache", "yiem");
  if (inputs.writable(inPackage)) return inPackage;
  return join(inputs.env.XDG_CACHE_HOME || join(inputs.home, ".cache"), "yiem");
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
