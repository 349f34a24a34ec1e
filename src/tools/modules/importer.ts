/**
 * What one evaluated module sees of the world: its `require`, `import.meta` and dynamic
 * `import()`. Rules:
 * - `yiem` is the library entry (loaded before any module runs);
 * - relative, absolute and `file:` specifiers are this loader's files, resolved from the real
 *   folder of the importing file (a symbolic link's target folder, as Node does);
 * - packages and `node:` built-ins come from Node's `require` made for the importing file's real
 *   path, so they resolve from that file's own node_modules (never from the cache folder); a
 *   package not found there is looked up among yiem's own dependencies, so the example tools
 *   (which use `city-timezones`) work when yiem is installed globally or in another project;
 * - a static import (`require`) of a module suspended at a top-level `await` throws
 *   `ERR_REQUIRE_ASYNC_MODULE` naming both files; a dynamic `import()` waits for it.
 */
import { realpathSync } from "node:fs";
import { createRequire, isBuiltin } from "node:module";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import { requireCjs } from "../../require-cjs.js";
import { importModule } from "../../dynamic-import.js";
import { asNamespace, asRequired, getLibrary, libraryEntry } from "./interop.js";
import { isFileSpecifier, resolveFile } from "./resolve.js";

/** How the importer reaches the evaluator (passed in to keep the two files acyclic). */
export interface Evaluator {
  /** Starts (or reuses) the evaluation of `path`; returns after its synchronous part. */
  instantiate(path: string): { path: string; state: string; module: { exports: unknown } };
  /** Evaluates `path` completely; its exports. */
  evaluate(path: string): Promise<unknown>;
}

export interface Importer {
  require: NodeRequire;
  meta: Record<string, unknown>;
  dynamicImport: (specifier: unknown) => Promise<unknown>;
}

const nativeRequires = new Map<string, NodeRequire>();

/** Node's require for files in the folder of the real path `realFile`. */
function nativeRequireFor(realFile: string): NodeRequire {
  const dir = dirname(realFile);
  let require = nativeRequires.get(dir);
  if (!require) {
    require = createRequire(realFile);
    nativeRequires.set(dir, require);
  }
  return require;
}

/** The file of package `specifier` for the module at `realFile`: its own node_modules first, then yiem's. */
function resolvePackage(specifier: string, realFile: string): string {
  const native = nativeRequireFor(realFile);
  if (isBuiltin(specifier)) return specifier;
  try {
    return native.resolve(specifier);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") throw error;
    try {
      return requireCjs.resolve(specifier);
    } catch {
      const missing = new Error(
        `Cannot find package ${JSON.stringify(specifier)} imported by ${realFile}: install it beside the tool (npm i ${specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]})`,
      );
      (missing as NodeJS.ErrnoException).code = "MODULE_NOT_FOUND";
      throw missing;
    }
  }
}

/** The importer of the module at `path` (absolute, as loaded). */
export function createImporter(path: string, evaluator: Evaluator): Importer {
  let real: string | undefined;
  // The real path is looked up only when something is resolved: most tools import only `yiem`.
  const realFile = () => (real ??= realpathSync.native(path));

  const resolveSpecifier = (specifier: string): string => {
    if (specifier === "yiem") return libraryEntry();
    if (isFileSpecifier(specifier)) return resolveFile(specifier, realFile());
    return resolvePackage(specifier, realFile());
  };

  const require = ((specifier: string) => {
    if (specifier === "yiem") return getLibrary("required");
    if (!isFileSpecifier(specifier)) return asRequired(nativeRequireFor(realFile())(resolvePackage(specifier, realFile())));
    const record = evaluator.instantiate(resolveFile(specifier, realFile()));
    if (record.state === "suspended") {
      const error = new Error(
        `${record.path} uses top-level await, so ${path} cannot import it statically; use \`await import(${JSON.stringify(specifier)})\` instead`,
      );
      (error as NodeJS.ErrnoException).code = "ERR_REQUIRE_ASYNC_MODULE";
      throw error;
    }
    return record.module.exports;
  }) as NodeRequire;
  require.resolve = ((specifier: string) => resolveSpecifier(String(specifier))) as NodeRequire["resolve"];

  let url: string | undefined;
  const meta = {
    get url() {
      return (url ??= pathToFileURL(path).href);
    },
    filename: path,
    dirname: dirname(path),
    resolve(specifier: string): string {
      const target = resolveSpecifier(String(specifier));
      if (isBuiltin(target)) return target.startsWith("node:") ? target : `node:${target}`;
      return pathToFileURL(target).href;
    },
  };

  const dynamicImport = async (specifier: unknown): Promise<unknown> => {
    await null; // let the importing module finish its synchronous part first
    const spec = String(specifier);
    if (spec === "yiem") return getLibrary("namespace");
    if (isFileSpecifier(spec)) return asNamespace(await evaluator.evaluate(resolveFile(spec, realFile())));
    const target = resolvePackage(spec, realFile());
    try {
      return asNamespace(nativeRequireFor(realFile())(target));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ERR_REQUIRE_ASYNC_MODULE") throw error;
      return importModule(pathToFileURL(target).href);
    }
  };

  return { require, meta, dynamicImport };
}
