/**
 * Loading tool files from folders. Rules:
 * - folders in the order given, files alphabetically (by code point) within each folder;
 * - `*.ts`, `*.mts`, `*.js`, `*.mjs` are module tools; `*.tool.yaml|yml|json` are command tools;
 *   names starting with `_` or `.`, `*.d.ts` and `*.test.*` are skipped;
 * - a module default-exports a tool or exports `getTool()` returning one;
 * - a file that fails to load is a problem with its path and reason; every other tool still loads;
 * - so is a tool whose inputSchema ajv cannot use (./schema-check.ts): it is not registered;
 * - a duplicate name is a problem naming both files; the first one loaded keeps the name;
 * - a tool or hook file must be a regular file (or a link to one): a FIFO, socket or device of a
 *   tool file's name is a problem, never read (it could block the load forever);
 * - a tool file another user may have planted (../planted-path.ts: not theirs or root's, in a
 *   folder others can write to, also a link planted there) is a problem, never loaded.
 * Modules go through yiem's own loader (./modules/): TypeScript and ES modules transformed once and
 * cached on disk by content; `yiem` resolves to this package.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { messageOf } from "../error-text.js";
import { plantedOnTheWay, plantedReason } from "../planted-path.js";
import { fileKind } from "../regular-file.js";
import { ToolRegistry } from "./registry.js";
import { checkToolShape } from "./define.js";
import { findSchemaProblems } from "./schema-check.js";
import { processCacheScope, type CacheScope } from "../cache-dir.js";
import type { Tool, ToolLoadProblem } from "./types.js";

const MODULE_EXTENSIONS = [".ts", ".mts", ".js", ".mjs"];
const COMMAND_SUFFIXES = [".tool.yaml", ".tool.yml", ".tool.json"];
/** Every suffix of a tool file (module tools, then command tools): the one list (the generator checks names against it). */
export const TOOL_FILE_SUFFIXES: readonly string[] = [...MODULE_EXTENSIONS, ...COMMAND_SUFFIXES];

export type ToolFileKind = "module" | "command";

/** Whether `fileName` is a tool file, and of which kind. */
export function toolFileKind(fileName: string): ToolFileKind | null {
  if (fileName.startsWith("_") || fileName.startsWith(".")) return null;
  if (fileName.endsWith(".d.ts") || fileName.endsWith(".d.mts") || /\.test\.[^.]+$/.test(fileName)) return null;
  if (COMMAND_SUFFIXES.some((s) => fileName.endsWith(s))) return "command";
  if (MODULE_EXTENSIONS.some((e) => fileName.endsWith(e))) return "module";
  return null;
}

/**
 * Tool files of one folder, alphabetically. Rejects when the folder cannot be read. Read
 * synchronously (one folder listing; node:fs/promises and the modules it loads stay out of a start).
 */
export async function listToolFiles(dir: string): Promise<string[]> {
  const entries = readdirSync(dir, { withFileTypes: true });
  return entries
    .filter((e) => !e.isDirectory() && toolFileKind(e.name) !== null)
    .map((e) => e.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((name) => join(dir, name));
}

export interface LoadToolsOptions {
  /** Add to this registry (e.g. one holding built-ins); default: a new one. */
  registry?: ToolRegistry;
  /** writeTool's folder: its tools are model-written (`ToolSource.generated`). */
  generatedDir?: string | null;
  /** Whose caches the modules and schemas go in (../cache-dir.ts: the CLI's io); default the process's. */
  cache?: CacheScope;
  /** The environment command tools read their manifest's `${VAR}` from and start their children under (./command-tool.ts: the CLI's io.env); default the process's. */
  env?: NodeJS.ProcessEnv;
}

export interface LoadToolsResult {
  registry: ToolRegistry;
  problems: ToolLoadProblem[];
}

/** Loads every tool of `dirs` (one folder or a list) into a registry; problems are collected, never thrown. */
export async function loadTools(dirs: string | string[], options: LoadToolsOptions = {}): Promise<LoadToolsResult> {
  const registry = options.registry ?? new ToolRegistry();
  const problems: ToolLoadProblem[] = [];
  const files: string[] = [];
  for (const dir of typeof dirs === "string" ? [dirs] : dirs) {
    const absolute = resolve(dir);
    try {
      files.push(...(await listToolFiles(absolute)));
    } catch (error) {
      problems.push({ path: absolute, reason: `cannot read tool folder: ${(error as Error).message}` });
    }
  }
  const cache = options.cache ?? processCacheScope();
  const env = options.env ?? process.env;
  const loaded = await Promise.all(files.map((file) => loadTrustedToolFile(file, cache, env).then(
    (tool) => ({ file, tool, error: null as string | null }),
    (error: unknown) => ({ file, tool: null, error: errorMessage(error) }),
  )));
  const badSchemas = await findSchemaProblems(loaded.flatMap((l) => (l.tool ? [l.tool] : [])), cache);
  for (const { file, tool, error } of loaded) {
    if (!tool) {
      problems.push({ path: file, reason: error ?? "unknown error" });
      continue;
    }
    const schemaProblem = badSchemas.get(tool);
    if (schemaProblem !== undefined) {
      problems.push({ path: file, reason: `tool "${tool.name}": invalid inputSchema: ${schemaProblem}` });
      continue;
    }
    try {
      const generated = options.generatedDir && dirname(file) === resolve(options.generatedDir) ? { generated: true as const } : {};
      registry.register(tool, { kind: toolFileKind(basename(file)) === "command" ? "command" : "file", path: file, ...generated });
    } catch (err) {
      problems.push({ path: file, reason: errorMessage(err) });
    }
  }
  registry.problems.push(...problems);
  return { registry, problems };
}

/** `loadToolFile`, unless another user may have planted the file (rules above). */
async function loadTrustedToolFile(file: string, cache: CacheScope, env: NodeJS.ProcessEnv): Promise<Tool> {
  const planted = plantedOnTheWay(file);
  if (planted) throw new Error(`refused: the file ${plantedReason(planted, file)}`);
  return loadToolFile(file, cache, env);
}

/**
 * Loads one tool file (module or command manifest), a module's code cached in `cache`, a command
 * tool under `env` (`LoadToolsOptions.env`). Throws with a clear reason.
 */
export async function loadToolFile(file: string, cache: CacheScope = processCacheScope(), env: NodeJS.ProcessEnv = process.env): Promise<Tool> {
  const kind = toolFileKind(basename(file));
  if (kind === "command") {
    // A manifest is read through readRegularText, which refuses a non-regular file itself.
    const { loadCommandTool } = await import("./command-tool.js");
    return loadCommandTool(file, env);
  }
  refuseNonRegularFile(file);
  const { importModule } = await moduleLoader();
  const mod = await importModule(file, cache);
  let tool: unknown;
  if (typeof mod.getTool === "function") tool = await (mod.getTool as () => unknown)();
  else if (mod.default !== undefined) tool = unwrapDefault(mod.default);
  else throw new Error("the file neither default-exports a tool nor exports getTool()");
  if (typeof tool === "function" && !(tool as { execute?: unknown }).execute) tool = await (tool as () => unknown)();
  const problem = checkToolShape(tool);
  if (problem) throw new Error(`not a valid tool: ${problem}`);
  return tool as Tool;
}

let loaderModule: Promise<typeof import("./modules/index.js")> | undefined;

/**
 * The tool module loader, imported on first use (a chunk of its own in the bundle, so `--help`
 * never loads it), once: 500 tools ask for it 500 times.
 */
function moduleLoader(): Promise<typeof import("./modules/index.js")> {
  loaderModule ??= import("./modules/index.js");
  return loaderModule;
}

/** Imports a TS/JS module file through the tool loader (same cache, `yiem` is this package). */
export async function importModuleFile(path: string, cache: CacheScope = processCacheScope()): Promise<Record<string, unknown>> {
  refuseNonRegularFile(path);
  const { importModule } = await moduleLoader();
  return importModule(path, cache);
}

/** Throws when `file` exists but is not a regular file (a missing file fails later, as before). */
function refuseNonRegularFile(file: string): void {
  const stats = statSync(file, { throwIfNoEntry: false });
  if (!stats || stats.isFile()) return;
  throw new Error(`not a regular file (${fileKind(stats)})`);
}

function unwrapDefault(value: unknown): unknown {
  // A CommonJS module exporting `{ default: tool }` nests the default export once more.
  const inner = value as { default?: unknown; execute?: unknown } | null;
  return inner && typeof inner === "object" && inner.execute === undefined && inner.default !== undefined ? inner.default : value;
}

export function errorMessage(error: unknown): string {
  const text = messageOf(error).split("\n")[0];
  if (text !== "" || !(error instanceof Error)) return text || "unknown error";
  return messageOf(error.name) || "Error";
}
