/** Where yiem's own files are (package root) and where it keeps caches that survive between runs. */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let root: string | undefined;

/**
 * This package's root: the nearest folder above this module that holds a package.json. The same
 * from src/ (tests), dist/ (tsc output) and dist/bundle/ (what the CLI runs).
 */
export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  root = dir;
  return root;
}

/** `$YIEM_CACHE_DIR`, else `node_modules/.cache/yiem` of this package. */
export function yiemCacheDir(): string {
  return process.env.YIEM_CACHE_DIR || join(packageRoot(), "node_modules", ".cache", "yiem");
}
