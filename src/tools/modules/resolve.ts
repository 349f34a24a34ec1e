/**
 * Where a specifier points and how its file is run. Rules:
 * - relative (`./`, `../`), absolute and `file:` specifiers are files of this loader: the exact
 *   file when it exists; else a `.js`/`.mjs`/`.cjs` specifier tries `.ts`/`.mts`/`.cts` (the
 *   TypeScript convention); else the name plus `.ts .mts .cts .js .mjs .cjs .json`; else the
 *   folder's `index` with those extensions. A file is identified by its absolute path as found.
 * - every other specifier (packages, `node:` built-ins) is the host's: Node resolves it from the
 *   importing file's own folder.
 */
import { statSync } from "node:fs";
import { dirname, extname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export type ModuleFormat = "typescript" | "javascript" | "commonjs" | "json";

const TRY_EXTENSIONS = [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs", ".json"];
const TS_FOR_JS: Record<string, string> = { ".js": ".ts", ".mjs": ".mts", ".cjs": ".cts" };

/** Whether this loader (not Node) resolves `specifier`. */
export function isFileSpecifier(specifier: string): boolean {
  return specifier.startsWith("./") || specifier.startsWith("../") || specifier === "." || specifier === ".." ||
    specifier.startsWith("file:") || isAbsolute(specifier);
}

/** Successful resolutions until the microtask queue drains (500 tools importing one helper look once). */
const resolvedThisTurn = new Map<string, string>();

/** The absolute path of the file `specifier` (a file specifier) names from `fromFile`. Throws MODULE_NOT_FOUND. */
export function resolveFile(specifier: string, fromFile: string): string {
  const base = specifier.startsWith("file:") ? fileURLToPath(specifier) : resolve(dirname(fromFile), specifier);
  const remembered = resolvedThisTurn.get(base);
  if (remembered !== undefined) return remembered;
  const found = findFile(base);
  if (found) {
    if (resolvedThisTurn.size === 0) queueMicrotask(() => resolvedThisTurn.clear());
    resolvedThisTurn.set(base, found);
    return found;
  }
  const error = new Error(`Cannot find module '${specifier}' imported from ${fromFile}`);
  (error as NodeJS.ErrnoException).code = "MODULE_NOT_FOUND";
  throw error;
}

function findFile(base: string): string | null {
  if (isFile(base)) return base;
  const ext = extname(base);
  const tsExt = TS_FOR_JS[ext];
  if (tsExt) {
    const mapped = base.slice(0, -ext.length) + tsExt;
    if (isFile(mapped)) return mapped;
  }
  for (const candidate of TRY_EXTENSIONS) if (isFile(base + candidate)) return base + candidate;
  for (const candidate of TRY_EXTENSIONS) if (isFile(join(base, `index${candidate}`))) return join(base, `index${candidate}`);
  return null;
}

function isFile(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
}

/** How the file at `path` with `source` runs: by extension; a `.js` file without import/export words is CommonJS. */
export function moduleFormat(path: string, source: string): ModuleFormat {
  const ext = extname(path);
  if (ext === ".ts" || ext === ".mts" || ext === ".cts") return "typescript";
  if (ext === ".json") return "json";
  if (ext === ".cjs") return "commonjs";
  if (ext === ".mjs") return "javascript";
  return /\b(?:import|export)\b/.test(source) ? "javascript" : "commonjs";
}
