/**
 * yiem's module loader for tool files and module hooks: TypeScript and ES modules transformed by
 * sucrase into CommonJS, cached on disk by content, evaluated once per (path, content) per process.
 * See evaluate.ts for the evaluation rules, resolve.ts for resolution and interop.ts for shapes.
 */
import { resolve } from "node:path";
import { evaluateFile } from "./evaluate.js";
import { asNamespace, loadLibrary } from "./interop.js";

/** Imports the module file at `path` (relative to the working folder or absolute); its namespace. */
export async function importModule(path: string): Promise<Record<string, unknown>> {
  await loadLibrary();
  return asNamespace(await evaluateFile(resolve(path)));
}
