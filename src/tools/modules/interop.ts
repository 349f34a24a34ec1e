/**
 * Module shapes between ES modules and CommonJS. Rules:
 * - `require` of an ES module namespace gives an object marked `__esModule` with live getters for
 *   its exports, so transformed code reads `default` and named exports the ES way;
 * - an importer (`importModule`, dynamic `import()`) gets a namespace: transformed ES modules'
 *   `exports` as they are; CommonJS `module.exports` as `default` plus its own enumerable keys.
 * - `yiem` is this package's library entry, loaded once with native `import()`.
 */
import { existsSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { types } from "node:util";

const esModuleViews = new WeakMap<object, Record<string, unknown>>();

/** What `require` hands to transformed code for a value a native require returned. */
export function asRequired(value: unknown): unknown {
  return types.isModuleNamespaceObject(value) ? esModuleView(value as Record<string, unknown>) : value;
}

/** An object marked `__esModule` with live getters for the exports of `namespace` (one per namespace). */
function esModuleView(namespace: Record<string, unknown>): Record<string, unknown> {
  let view = esModuleViews.get(namespace);
  if (!view) {
    view = Object.create(null) as Record<string, unknown>;
    Object.defineProperty(view, "__esModule", { value: true });
    for (const key of Object.keys(namespace)) {
      if (key === "__esModule") continue;
      Object.defineProperty(view, key, { enumerable: true, get: () => namespace[key] });
    }
    esModuleViews.set(namespace, view);
  }
  return view;
}

/** The namespace an importer sees for module exports `value`. */
export function asNamespace(value: unknown): Record<string, unknown> {
  if (types.isModuleNamespaceObject(value)) return value as Record<string, unknown>;
  if (value !== null && typeof value === "object" && (value as { __esModule?: unknown }).__esModule) return value as Record<string, unknown>;
  const namespace: Record<string, unknown> = {};
  if (value !== null && (typeof value === "object" || typeof value === "function")) {
    for (const key of Object.keys(value)) namespace[key] = (value as Record<string, unknown>)[key];
  }
  namespace.default = value;
  return namespace;
}

/**
 * The library entry tool files import as `yiem`: `index.js` (built) else `index.ts` (source), two
 * folders up from src|dist/tools/modules, or beside this code when it is bundled into one chunk.
 */
export function libraryEntry(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const root = basename(here) === "modules" ? resolve(here, "..", "..") : here;
  const built = join(root, "index.js");
  return existsSync(built) ? built : join(root, "index.ts");
}

let library: { namespace: Record<string, unknown>; required: unknown } | undefined;
let libraryLoading: Promise<void> | undefined;

/** Loads the library once (native `import()`); call before evaluating any module. */
export function loadLibrary(): Promise<void> {
  libraryLoading ??= import(pathToFileURL(libraryEntry()).href).then((namespace: Record<string, unknown>) => {
    library = { namespace, required: esModuleView(namespace) };
  }, (error: unknown) => {
    libraryLoading = undefined;
    throw error;
  });
  return libraryLoading;
}

/** The library as `require("yiem")` sees it (`asRequired`) or as `import("yiem")` sees it. */
export function getLibrary(as: "required" | "namespace"): unknown {
  if (!library) throw new Error("yiem's library entry is not loaded yet");
  return as === "required" ? library.required : library.namespace;
}
