/**
 * What every command needs before it works: the resolved spec (flags → overrides) and the tool
 * registry (built-ins first, then the tool folders). Shared by run, config and tools.
 */
import type { ResolvedSpec, SpecOverrides, SpecSet } from "../config/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { ToolLoadProblem } from "../tools/types.js";
import type { McpSession } from "../mcp/session.js";
import type { CliIo } from "./io.js";
import { cacheScopeOf, type CacheScope } from "../cache-dir.js";

/** Maps yargs flags to spec overrides (names as in CONTRACT §4). */
export function overridesFromArgv(argv: Record<string, unknown>): SpecOverrides {
  const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : v === undefined ? undefined : [String(v)]);
  const overrides: SpecOverrides = {};
  if (argv.model !== undefined) overrides.model = String(argv.model);
  if (argv["base-url"] !== undefined) overrides.baseURL = String(argv["base-url"]);
  if (argv.system !== undefined) overrides.system = String(argv.system);
  if (argv["tool-dir"] !== undefined) overrides.toolDirs = list(argv["tool-dir"]);
  if (argv["tool-execution"] !== undefined) overrides.toolExecution = String(argv["tool-execution"]);
  if (argv["max-turns"] !== undefined) overrides.maxTurns = argv["max-turns"] as number;
  if (argv["tool-timeout"] !== undefined) overrides.toolTimeoutMs = String(argv["tool-timeout"]);
  if (argv.timeout !== undefined) overrides.runTimeoutMs = String(argv.timeout);
  if (argv["allow-tools"] !== undefined) overrides.allowTools = list(argv["allow-tools"]);
  if (argv["deny-tools"] !== undefined) overrides.denyTools = list(argv["deny-tools"]);
  if (typeof argv.strict === "boolean") overrides.strict = argv.strict;
  if (argv["mcp-config"] !== undefined) overrides.mcpConfigs = list(argv["mcp-config"]);
  if (argv["spec-mcp"] === false) overrides.noSpecMcp = true;
  if (argv["output-schema"] !== undefined) overrides.outputSchema = String(list(argv["output-schema"])!.at(-1));
  if (argv.attach !== undefined) overrides.attachments = list(argv.attach);
  const sets = setsFromArgv(argv, list);
  if (sets.length) overrides.sets = sets;
  return overrides;
}

/** The named flags that set one spec key each (docs/spec.md, precedence); they win over `--set`. */
export const SPEC_KEY_FLAGS = [
  ["temperature", "model.temperature"],
  ["max-tokens", "model.maxTokens"],
  ["budget", "limits.maxTokens"],
  ["budget-usd", "limits.maxCostUsd"],
  ["max-retries", "model.maxRetries"],
  ["api-key-env", "model.apiKeyEnv"],
] as const;

/** `--set KEY.PATH=VALUE` (repeatable, in order), then the named flags of SPEC_KEY_FLAGS (the last of a repeated one). */
function setsFromArgv(argv: Record<string, unknown>, list: (v: unknown) => string[] | undefined): SpecSet[] {
  const sets: SpecSet[] = (list(argv.set) ?? []).map((text) => {
    const at = text.indexOf("=");
    return at < 0 ? { flag: "--set", key: text } : { flag: "--set", key: text.slice(0, at).trim(), value: text.slice(at + 1) };
  });
  for (const [flag, key] of SPEC_KEY_FLAGS) {
    const value = list(argv[flag])?.at(-1);
    if (value !== undefined) sets.push({ flag: `--${flag}`, key, value, raw: flag === "api-key-env" });
  }
  return sets;
}

/**
 * `--system` and `--append-system` as text: `@FILE` is read (relative to the current folder), as
 * for `--args`, `--schema` and `--code`. A file that cannot be read is a command-line problem.
 */
async function readPromptFlags(argv: Record<string, unknown>, io: CliIo, overrides: SpecOverrides, problems: string[]): Promise<void> {
  const { readFlagValue } = await import("./flag-value.js");
  for (const [flag, key] of [["system", "system"], ["append-system", "appendSystem"]] as const) {
    if (argv[flag] === undefined) continue;
    try {
      overrides[key] = await readFlagValue(flag, String(argv[flag]), io);
    } catch (error) {
      problems.push((error as Error).message);
      delete overrides[key];
    }
  }
}

/** The spec for `argv`; `commandLineProblems` (see config/types.ts) are reported with the spec's. */
export async function loadSpecFromArgv(argv: Record<string, unknown>, io: CliIo, requireModel: boolean, commandLineProblems: string[] = []): Promise<ResolvedSpec> {
  const { loadSpec } = await import("../config/load.js");
  const overrides = overridesFromArgv(argv);
  const problems = [...commandLineProblems];
  await readPromptFlags(argv, io, overrides, problems);
  return loadSpec({
    cwd: io.cwd,
    configPath: argv.config === undefined ? undefined : String(argv.config),
    env: io.env,
    overrides,
    requireModel,
    commandLineProblems: problems,
  });
}

export interface LoadedTools {
  registry: ToolRegistry;
  problems: ToolLoadProblem[];
  /** The call's environment (io.env): the command tools were loaded under it, MCP stdio servers start under it (`withMcp`), hook programs are looked up on its PATH. */
  env: NodeJS.ProcessEnv;
  /** The MCP servers, when the spec has any and they were started (`withMcp`); close it when done. */
  mcp?: McpSession;
}

/** The caches of a CLI call: those of its io's environment and folder (../cache-dir.ts). */
export function callCacheScope(io: CliIo): CacheScope {
  return cacheScopeOf(io.env, io.cwd);
}

/**
 * Built-ins named by the spec, then every tool of the spec's folders, their code cached in `cache`
 * (the call's: `cacheScopeOf(io.env, io.cwd)`), whose env (the call's io.env) is also the parent
 * environment of the command tools. Problems are returned, not thrown.
 */
export async function loadRegistry(spec: ResolvedSpec, cache: CacheScope): Promise<LoadedTools> {
  const [{ ToolRegistry }, { loadTools }, { createBuiltinTools }] = await Promise.all([
    import("../tools/registry.js"),
    import("../tools/loader.js"),
    import("../tools/builtins/index.js"),
  ]);
  const registry = new ToolRegistry();
  for (const tool of createBuiltinTools(spec.builtinTools, { registry, writeToolDir: spec.writeToolDir, cache })) {
    registry.register(tool, { kind: "builtin" });
  }
  const loaded = await loadTools(spec.toolDirs, { registry, generatedDir: spec.writeToolDir, cache, env: cache.env });
  return { ...loaded, env: cache.env };
}

/**
 * A problem that makes a tool or hook fail later, or a tool glob that matches nothing, found
 * before the model is called. `yiem run` emits each as a `warning` event, or under `--strict`
 * (spec `strict: true`) stops with exit 2 naming them all; `yiem tools check` lists them.
 */
export interface LoadProblem {
  /** The file at fault (a tool file, a manifest, a hook program), when there is one. */
  path?: string;
  /** What is wrong, without the path. */
  reason: string;
  /** The tool file did not load at all (its reason is the loader's). */
  notLoaded?: boolean;
}

/**
 * Every load problem of `spec` and its `loaded` tools: the tool files that did not load, command
 * tools and command hooks whose program cannot be started (../tools/program.ts), and each glob of
 * `tools.allow` / `tools.deny` (spec or flag; the default `*` aside) that matches no loaded tool.
 * The one home of these checks, for `yiem run`, `--strict` and `yiem tools check`.
 */
export async function findLoadProblems(spec: ResolvedSpec, loaded: LoadedTools): Promise<LoadProblem[]> {
  const [{ programProblem }, { commandToolProgram }, { hasWildcard, matchesGlob, splitGlobList }, { nearestName }] = await Promise.all([
    import("../tools/program.js"),
    import("../tools/command-tool.js"),
    import("../glob-list.js"),
    import("../nearest-name.js"),
  ]);
  const problems: LoadProblem[] = loaded.problems.map((p) => ({ path: p.path, reason: p.reason, notLoaded: true }));
  const infos = loaded.registry.infos();
  for (const info of infos) {
    const tool = loaded.registry.get(info.name);
    const command = tool && commandToolProgram(tool);
    const problem = command && programProblem(command.program, { cwd: command.baseDir, path: command.path });
    if (problem) problems.push({ path: info.source.kind === "builtin" ? undefined : info.source.path, reason: `tool "${info.name}": ${problem}` });
  }
  for (const key of ["beforeToolCall", "afterToolCall"] as const) {
    const hook = spec.hooks[key];
    if (hook === undefined || typeof hook === "string") continue;
    const problem = programProblem(hook.command[0], { cwd: spec.baseDir, path: loaded.env.PATH });
    if (problem) problems.push({ reason: `hooks.${key}: ${problem}` });
  }
  const names = infos.map((t) => t.name);
  for (const [key, flag, globs] of [["tools.allow", "--allow-tools", spec.tools.allow], ["tools.deny", "--deny-tools", spec.tools.deny]] as const) {
    const source = spec.sources[key];
    if (source === "default") continue;
    const label = source === "flag" ? flag : key;
    for (const glob of new Set(splitGlobList(globs))) {
      if (names.some((name) => matchesGlob(glob, name))) continue;
      const nearest = hasWildcard(glob) ? undefined : nearestName(glob, names);
      const hint = nearest ? `did you mean ${nearest}?` : names.length ? `tools: ${listed(names)}` : "no tool is loaded";
      problems.push({ reason: `${label} ${JSON.stringify(glob)} matches no tool (${hint})` });
    }
  }
  return problems;
}

/** `a, b, c` — at most 10 names, then how many more. */
function listed(names: string[]): string {
  return names.length <= 10 ? names.join(", ") : `${names.slice(0, 10).join(", ")} and ${names.length - 10} more`;
}

/** How a load problem reads in a warning event or a list: `tool not loaded: …` for a tool that did not load. */
export function loadProblemMessage(problem: LoadProblem): string {
  return problem.notLoaded ? `tool not loaded: ${problem.reason}` : problem.reason;
}

/**
 * Connects the spec's MCP servers (the MCP modules load only when there are some; a stdio server
 * starts under `loaded.env`) and adds their tools to `loaded.registry`. Throws McpRequiredError
 * (exit 1) or ConfigError (exit 2).
 */
export async function withMcp(loaded: LoadedTools, spec: ResolvedSpec, clientVersion: string, signal?: AbortSignal): Promise<LoadedTools> {
  if (spec.mcpServers.length === 0) return loaded;
  const { startMcp } = await import("../mcp/session.js");
  return { ...loaded, mcp: await startMcp(spec.mcpServers, loaded.registry, { clientVersion, signal, env: loaded.env }) };
}
