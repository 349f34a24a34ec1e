/** Where yiem keeps caches that survive between runs (transpiled tools, checked specs). */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** This package's root (the folder holding package.json), from src/ or dist/ alike. */
export function packageRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), "..");
}

/** `$YIEM_CACHE_DIR`, else `node_modules/.cache/yiem` of this package. */
export function yiemCacheDir(): string {
  return process.env.YIEM_CACHE_DIR || join(packageRoot(), "node_modules", ".cache", "yiem");
}
