/**
 * yiem's module loader for tool files and module hooks: TypeScript and ES modules transformed by
 * sucrase into CommonJS, cached on disk by content, evaluated once per (path, content) per process.
 * See evaluate.ts for the evaluation rules, resolve.ts for resolution and interop.ts for shapes.
 */
import { resolve } from "node:path";
import { evaluateFile } from "./evaluate.js";
import { asNamespace, loadLibrary } from "./interop.js";
import { processCacheScope, type CacheScope } from "../../cache-dir.js";

/**
 * Imports the module file at `path` (relative to the working folder or absolute); its namespace.
 * Its transformed code is cached in `scope`'s cache (the CLI's io; default the process's).
 */
export async function importModule(path: string, scope: CacheScope = processCacheScope()): Promise<Record<string, unknown>> {
  await loadLibrary();
  return asNamespace(await evaluateFile(resolve(path), scope));
}
