/**
 * This package: its root folder and its version. Rules: the root is the nearest folder above this
 * module holding a package.json (the same from src/ in tests and dist/ in the CLI); the version is
 * read from it once.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let root: string | undefined;
let version: string | undefined;

/** This package's root folder. */
export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  root = dir;
  return root;
}

/** This package's version (package.json). */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as { version: string }).version;
  return version;
}
