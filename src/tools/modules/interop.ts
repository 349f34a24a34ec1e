/**
 * Module shapes between ES modules and CommonJS. Rules:
 * - `require` of an ES module namespace gives an object marked `__esModule` with live getters for
 *   its exports, so transformed code reads `default` and named exports the ES way;
 * - an importer (`importModule`, dynamic `import()`) gets a namespace: transformed ES modules'
 *   `exports` as they are; CommonJS `module.exports` as `default` plus its own enumerable keys.
 * - `yiem` is this package's library entry (see `loadLibrary`).
 */
import { existsSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
// node:util/types, not node:util: the whole util module loads parseArgs and MIME too (start-up).
import { isModuleNamespaceObject } from "node:util/types";
import { requireCjs } from "../../require-cjs.js";
import { importModule } from "../../dynamic-import.js";

const esModuleViews = new WeakMap<object, Record<string, unknown>>();

/** What `require` hands to transformed code for a value a native require returned. */
export function asRequired(value: unknown): unknown {
  return isModuleNamespaceObject(value) ? esModuleView(value as Record<string, unknown>) : value;
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
  if (isModuleNamespaceObject(value)) return value as Record<string, unknown>;
  if (value !== null && typeof value === "object" && (value as { __esModule?: unknown }).__esModule) return value as Record<string, unknown>;
  const namespace: Record<string, unknown> = {};
  if (value !== null && (typeof value === "object" || typeof value === "function")) {
    for (const key of Object.keys(value)) namespace[key] = (value as Record<string, unknown>)[key];
  }
  namespace.default = value;
  return namespace;
}

/**
 * The library entry tool files import as `yiem`, and the tool kit module it re-exports:
 * - built with the bundle (`npm run build`): `dist/bundle/index.cjs` and `dist/bundle/tool-kit.cjs`,
 *   the library and the tool kit of the one CommonJS bundle the CLI runs (`dist/bundle/yiem.cjs`,
 *   one instance per process: src/code-cache.ts) and the package entry (`dist/index.js`)
 *   re-exports, so there is one instance of every module (scripts/bundle.mjs);
 * - built by tsc alone: `dist/index.js` and `dist/tools/define.js`;
 * - from source (tests without a build): `src/index.ts`.
 * This module is in dist/bundle/yiem.cjs (bundled), or in src|dist/tools/modules/.
 */
export function libraryFiles(): { entry: string; toolKit: string } {
  const here = dirname(fileURLToPath(import.meta.url));
  // dist/bundle/ (bundled); src|dist/tools/modules/ (unbundled): root is src|dist.
  const root = basename(here) === "bundle" ? dirname(here) : resolve(here, "..", "..");
  const bundle = join(root, "bundle");
  if (existsSync(join(bundle, "index.cjs"))) return { entry: join(bundle, "index.cjs"), toolKit: join(bundle, "tool-kit.cjs") };
  const built = join(root, "index.js");
  if (existsSync(built)) return { entry: built, toolKit: join(root, "tools", "define.js") };
  return { entry: join(root, "index.ts"), toolKit: join(root, "tools", "define.ts") };
}

/** The file `yiem` resolves to in a tool file (see `libraryFiles`). */
export function libraryEntry(): string {
  return libraryFiles().entry;
}

/**
 * What a tool needs of the library to be defined, from the tool kit module (`libraryFiles`; the
 * very module the entry re-exports): served without loading the rest of the library (the loop
 * and the providers, ~20 modules), since `yiem tools list` needs no more.
 */
export const TOOL_KIT_EXPORTS = ["defineTool", "textContent", "toolResult", "checkToolShape", "TOOL_NAME_PATTERN"];

let library: { namespace: Record<string, unknown>; required: unknown } | undefined;
let libraryLoading: Promise<void> | undefined;

/**
 * Readies the library for modules about to run; call before evaluating any. The built library
 * (`index.cjs`, or tsc's `index.js`) is loaded lazily: `require("yiem")` gives a view that answers the tool kit at once
 * and loads the whole library synchronously (require of an ES module) on the first other export
 * asked for. The source library (`index.ts`, tests without a build) is imported here, once.
 */
export function loadLibrary(): Promise<void> {
  if (library) return Promise.resolve();
  const { entry, toolKit } = libraryFiles();
  if (/\.c?js$/.test(entry)) {
    library = lazyLibrary(entry, toolKit);
    return Promise.resolve();
  }
  libraryLoading ??= importModule(pathToFileURL(entry).href).then((namespace) => {
    library = { namespace, required: esModuleView(namespace) };
  }, (error: unknown) => {
    libraryLoading = undefined;
    throw error;
  });
  return libraryLoading;
}

function lazyLibrary(entry: string, toolKitFile: string): { namespace: Record<string, unknown>; required: unknown } {
  let full: Record<string, unknown> | undefined;
  let kit: Record<string, unknown> | undefined;
  const load = () => (full ??= requireCjs(entry) as Record<string, unknown>);
  const toolKit = () => (kit ??= requireCjs(toolKitFile) as Record<string, unknown>);
  const isKit = (key: string | symbol): key is string => typeof key === "string" && TOOL_KIT_EXPORTS.includes(key);
  const has = (key: string | symbol) => key === "__esModule" || isKit(key) || key in load();
  const get = (key: string | symbol): unknown => {
    if (key === "__esModule") return true;
    return isKit(key) ? toolKit()[key] : (load() as Record<string | symbol, unknown>)[key];
  };
  const required = new Proxy(Object.create(null) as Record<string, unknown>, {
    get: (_target, key) => get(key),
    has: (_target, key) => has(key),
    ownKeys: () => ["__esModule", ...Object.keys(load())],
    getOwnPropertyDescriptor: (_target, key) =>
      has(key) ? { value: get(key), enumerable: key !== "__esModule", configurable: true, writable: false } : undefined,
  });
  return {
    required,
    get namespace() {
      return load();
    },
  };
}

/** The library as `require("yiem")` sees it (`asRequired`) or as `import("yiem")` sees it. */
export function getLibrary(as: "required" | "namespace"): unknown {
  if (!library) throw new Error("yiem's library entry is not loaded yet");
  return as === "required" ? library.required : library.namespace;
}
