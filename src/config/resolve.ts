/**
 * Turning a validated spec plus flags and environment into a ResolvedSpec.
 * Rules: flag > environment > spec > default for every value; spec paths resolve against the
 * spec's folder, flag paths against cwd; tool folders, the system prompt file and hook modules
 * must exist (the system prompt file a regular file: a FIFO or device is refused unread); a tool
 * folder, hook module or hook program another user may have planted (../planted-path.ts: not
 * theirs or root's, in a folder others can write to, also through a link) is refused, except a
 * `--tool-dir` the user names;
 * durations become milliseconds. Every problem goes to `problems` (./problems.ts), and the value
 * at fault falls back to its default, so that one load reports them all.
 */
import { statSync, type Stats } from "node:fs";
import path from "node:path";
import { DEFAULT_LIMITS, type Limits, type ToolExecutionMode } from "../loop/types.js";
import { plantedOnTheWay, plantedReason } from "../planted-path.js";
import { readNamedText } from "../regular-file.js";
import { parseDuration } from "./duration.js";
import { ConfigError, displayPath, fileError } from "./errors.js";
import { resolveModel, type ModelContext } from "./model.js";
import type { ParsedSpecFile } from "./parse.js";
import type { SpecPath } from "../interpolate.js";
import type { SpecProblems } from "./problems.js";
import {
  DEFAULT_BUILTIN_TOOLS,
  DEFAULT_HOOK_TIMEOUT_MS,
  SOURCE_KEYS,
  type AgentSpec,
  type HookSpec,
  type ResolvedHook,
  type ResolvedSpec,
  type SourceKey,
  type SpecOverrides,
  type ValueSource,
} from "./types.js";
import { formatKey } from "./validate.js";
import { resolveMcpServers } from "./mcp.js";
import { resolveAttachments, resolveOutput } from "./output.js";
import { splitGlobList } from "../glob-list.js";

export interface ResolveInput {
  spec: AgentSpec;
  parsed: ParsedSpecFile | null;
  cwd: string;
  env: NodeJS.ProcessEnv;
  overrides: SpecOverrides;
  requireModel: boolean;
  problems: SpecProblems;
  /** The flag that set the spec key at a path (`--set`, `--temperature` …; ./flag-sets.ts), if one did. */
  flagOf?: (specPath: SpecPath) => string | undefined;
}

const TOOL_EXECUTION_MODES: ToolExecutionMode[] = ["sequential", "parallel"];
/** writeTool's folder when the spec names none (and writeTool is on): beside the spec, or in cwd. */
const DEFAULT_WRITE_TOOL_DIR = "generated-tools";
const LIMIT_FLAGS: Partial<Record<keyof Limits, string>> = {
  maxTurns: "--max-turns",
  toolTimeoutMs: "--tool-timeout",
  runTimeoutMs: "--timeout",
};

export async function resolveSpec(input: ResolveInput): Promise<ResolvedSpec> {
  const { spec, parsed, cwd, overrides, problems } = input;
  const baseDir = parsed ? path.dirname(parsed.file) : cwd;
  // Every message names its key (`toolDirs[1]: …`) unless it already does.
  const specError = (message: string, specPath: SpecPath): ConfigError => {
    const key = formatKey(specPath);
    const flag = input.flagOf?.(specPath);
    const text = message.includes(key) || flag === `--set ${key}` ? message : `${key}: ${message}`;
    if (flag) return new ConfigError(`${flag}: ${text}`, { key: flag, specPath });
    return parsed
      ? fileError(text, { file: parsed.file, line: parsed.lineOf(specPath), key, specPath, cwd })
      : new ConfigError(text, { key, specPath });
  };
  const ctx: ModelContext = {
    cwd,
    baseDir,
    env: input.env,
    configLabel: parsed ? displayPath(parsed.file, cwd) : null,
    specError,
    problems,
    flagOf: input.flagOf ?? (() => undefined),
  };
  const sources: Partial<Record<SourceKey, ValueSource>> = {};
  const pick = <T>(key: SourceKey, flag: T | undefined, fromSpec: T | undefined, fallback: T): T => {
    sources[key] = flag !== undefined ? "flag" : fromSpec !== undefined ? "spec" : "default";
    return flag ?? fromSpec ?? fallback;
  };

  const { model, sources: modelSources } = await resolveModel(spec, overrides, ctx, input.requireModel);
  Object.assign(sources, modelSources);

  const basePrompt = (await problems.check(() => resolveSystemPrompt(spec, overrides, baseDir, specError))) ?? "";
  // --append-system: after the spec's (or --system's) prompt and a blank line.
  const systemPrompt = overrides.appendSystem === undefined ? basePrompt : basePrompt.trimEnd() === "" ? overrides.appendSystem : `${basePrompt.trimEnd()}\n\n${overrides.appendSystem}`;
  const promptInSpec = spec.systemPrompt !== undefined || spec.systemPromptFile !== undefined;
  sources.systemPrompt = overrides.system !== undefined || overrides.appendSystem !== undefined ? "flag" : promptInSpec ? "spec" : "default";

  const toolDirs = await resolveToolDirs(spec, overrides, cwd, baseDir, specError, problems);
  sources.toolDirs = overrides.toolDirs?.length ? "flag" : spec.toolDirs ? "spec" : "default";
  sources.writeToolDir = spec.writeToolDir !== undefined ? "spec" : "default";
  const builtinTools = [...(spec.builtinTools ?? DEFAULT_BUILTIN_TOOLS)];
  const writeToolOn = builtinTools.includes("writeTool");
  // Model-written code gets a folder of its own by default, never a reviewed tool folder.
  const writeToolDir =
    spec.writeToolDir !== undefined
      ? path.resolve(baseDir, spec.writeToolDir)
      : writeToolOn ? path.join(baseDir, DEFAULT_WRITE_TOOL_DIR) : null;
  // With writeTool on, its folder loads after the toolDirs (once it exists), so tools written in
  // an earlier run are offered again.
  if (writeToolOn && writeToolDir && !toolDirs.includes(writeToolDir) && isDirectory(writeToolDir)) {
    refusePlanted(writeToolDir, `writeTool folder "${spec.writeToolDir ?? DEFAULT_WRITE_TOOL_DIR}"`, ["writeToolDir"], specError);
    toolDirs.push(writeToolDir);
  }

  const toolExecution = pick("toolExecution", await problems.check(() => checkToolExecution(overrides.toolExecution)), spec.toolExecution, "sequential");
  const allow = pick("tools.allow", globList(overrides.allowTools), spec.tools?.allow, ["*"]);
  const deny = pick("tools.deny", globList(overrides.denyTools), spec.tools?.deny, []);

  const limits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]) {
    const flag = await problems.check(() => limitFlag(key, overrides));
    const raw = spec.limits?.[key];
    const fromSpec = raw === undefined ? undefined : typeof raw === "number" ? raw : parseDuration(raw);
    // Counts are whole numbers; a cost in USD keeps its cents.
    limits[key] = pick(`limits.${key}`, flag, fromSpec === undefined ? undefined : key === "maxCostUsd" ? fromSpec : Math.round(fromSpec), DEFAULT_LIMITS[key]);
  }
  if (limits.maxCostUsd > 0 && !model.pricing) {
    problems.add(specError("a cost budget needs model.pricing (USD per million tokens: inputPerMTok, outputPerMTok): yiem has no price table", ["limits", "maxCostUsd"]));
  }
  const resultCtx = { spec, overrides, cwd, baseDir, specError, problems };
  const output = await resolveOutput(resultCtx);
  sources.output = output ? (output.from === "--output-schema" ? "flag" : "spec") : "default";
  const attachments = await resolveAttachments(resultCtx);
  sources.attachments = overrides.attachments?.length ? "flag" : spec.attachments?.length ? "spec" : "default";

  const hooks: ResolvedSpec["hooks"] = {};
  for (const key of ["beforeToolCall", "afterToolCall"] as const) {
    const hook = spec.hooks?.[key];
    sources[`hooks.${key}`] = hook === undefined ? "default" : "spec";
    const resolved = hook === undefined ? undefined : await problems.check(() => resolveHook(hook, ["hooks", key], baseDir, specError));
    if (resolved !== undefined) hooks[key] = resolved;
  }

  const strict = pick("strict", overrides.strict, spec.strict, false);

  const mcpServers = await resolveMcpServers({
    spec, specFile: parsed?.file ?? null, baseDir, cwd, env: input.env, overrides, toolTimeoutMs: limits.toolTimeoutMs, specError,
  });

  sources["sessions.save"] = spec.sessions?.save !== undefined ? "spec" : "default";

  sources.name = spec.name !== undefined ? "spec" : "default";
  sources.builtinTools = spec.builtinTools ? "spec" : "default";
  return {
    configPath: parsed?.file ?? null,
    baseDir,
    name: spec.name ?? null,
    systemPrompt,
    model,
    toolDirs,
    builtinTools,
    writeToolDir,
    toolExecution,
    tools: { allow: [...allow], deny: [...deny] },
    limits,
    hooks,
    strict,
    sessions: { save: spec.sessions?.save ?? false },
    sources: Object.fromEntries(SOURCE_KEYS.map((key) => [key, sources[key] ?? "default"])) as Record<
      SourceKey,
      ValueSource
    >,
    mcpServers,
    output,
    attachments,
  };
}

type SpecErrorFn = (message: string, specPath: SpecPath) => ConfigError;

async function resolveSystemPrompt(
  spec: AgentSpec,
  overrides: SpecOverrides,
  baseDir: string,
  specError: SpecErrorFn,
): Promise<string> {
  if (overrides.system !== undefined) return overrides.system;
  if (spec.systemPrompt !== undefined) return spec.systemPrompt;
  if (spec.systemPromptFile === undefined) return "";
  const file = path.resolve(baseDir, spec.systemPromptFile);
  return readNamedText(file, (reason) => specError(`system prompt file "${spec.systemPromptFile}" ${reason} (${file})`, ["systemPromptFile"]));
}

/** Throws the spec error for `what` (at `absolute`) when another user may have planted it (or a link on its way). */
function refusePlanted(absolute: string, what: string, specPath: SpecPath, specError: SpecErrorFn): void {
  const found = plantedOnTheWay(absolute);
  if (found) throw specError(`${what} ${plantedReason(found, absolute)} (${absolute}); yiem does not run code from it`, specPath);
}

/** The stats of `file`, or undefined when it cannot be stat'ed (synchronous: a few stats a start, and node:fs/promises stays unloaded). */
function statOrUndefined(file: string): Stats | undefined {
  try {
    return statSync(file, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

function isDirectory(dir: string): boolean {
  return statOrUndefined(dir)?.isDirectory() ?? false;
}

function isFile(file: string): boolean {
  return statOrUndefined(file)?.isFile() ?? false;
}

async function resolveToolDirs(
  spec: AgentSpec,
  overrides: SpecOverrides,
  cwd: string,
  baseDir: string,
  specError: SpecErrorFn,
  problems: SpecProblems,
): Promise<string[]> {
  const dirs: string[] = [];
  if (overrides.toolDirs?.length) {
    for (const dir of overrides.toolDirs) {
      const absolute = path.resolve(cwd, dir);
      if (!isDirectory(absolute)) {
        problems.add(new ConfigError(`--tool-dir: tool folder "${dir}" not found (${absolute})`, { key: "--tool-dir" }));
        continue;
      }
      dirs.push(absolute);
    }
  } else if (spec.toolDirs === undefined) {
    // Default: the `tools/` folder beside the spec (or in cwd without a spec), when there is one.
    const fallback = path.join(baseDir, "tools");
    if (isDirectory(fallback)) {
      refusePlanted(fallback, 'tool folder "tools"', ["toolDirs"], specError);
      dirs.push(fallback);
    }
  } else {
    for (const [index, dir] of spec.toolDirs.entries()) {
      const absolute = path.resolve(baseDir, dir);
      if (!isDirectory(absolute)) {
        problems.add(specError(`tool folder "${dir}" not found (${absolute})`, ["toolDirs", index]));
        continue;
      }
      refusePlanted(absolute, `tool folder "${dir}"`, ["toolDirs", index], specError);
      dirs.push(absolute);
    }
  }
  return [...new Set(dirs)];
}

function checkToolExecution(value: string | undefined): ToolExecutionMode | undefined {
  if (value === undefined) return undefined;
  if (!TOOL_EXECUTION_MODES.includes(value as ToolExecutionMode)) {
    throw new ConfigError(
      `--tool-execution must be one of ${TOOL_EXECUTION_MODES.join(", ")} (got ${JSON.stringify(value)})`,
      { key: "--tool-execution" },
    );
  }
  return value as ToolExecutionMode;
}

/** Flag globs: repeated flags and comma-separated items alike (../glob-list.ts); undefined when not given. */
function globList(values: string[] | undefined): string[] | undefined {
  return values?.length ? splitGlobList(values) : undefined;
}

function limitFlag(key: keyof Limits, overrides: SpecOverrides): number | undefined {
  const flag = LIMIT_FLAGS[key];
  const value = flag ? overrides[key as "maxTurns" | "toolTimeoutMs" | "runTimeoutMs"] : undefined;
  if (value === undefined || !flag) return undefined;
  if (key === "maxTurns") {
    const turns = typeof value === "number" ? value : /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(turns) || turns < 1) {
      throw new ConfigError(`${flag} must be an integer >= 1 (got ${JSON.stringify(value)})`, { key: flag });
    }
    return turns;
  }
  try {
    return parseDuration(value);
  } catch (error) {
    throw new ConfigError(`${flag}: ${(error as Error).message}`, { key: flag });
  }
}

async function resolveHook(
  hook: HookSpec,
  specPath: SpecPath,
  baseDir: string,
  specError: SpecErrorFn,
): Promise<ResolvedHook> {
  if (typeof hook === "string") {
    const file = path.resolve(baseDir, hook);
    if (!isFile(file)) {
      throw specError(`hook module "${hook}" not found (${file})`, specPath);
    }
    refusePlanted(file, `hook module "${hook}"`, specPath, specError);
    return file;
  }
  const commandPath = [...specPath, "command"];
  if (typeof hook.command === "string" && /\s/.test(hook.command.trim())) {
    throw specError(
      `"${formatKey(commandPath)}" must list the program and its arguments separately, ` +
        `e.g. ["./hooks/audit.sh", "--strict"] (no shell is used)`,
      commandPath,
    );
  }
  const argv = (typeof hook.command === "string" ? [hook.command.trim()] : hook.command).map((arg) =>
    arg.startsWith("./") || arg.startsWith("../") ? path.resolve(baseDir, arg) : arg,
  );
  if (path.isAbsolute(argv[0]) && !isFile(argv[0])) {
    throw specError(`hook program "${argv[0]}" not found`, [...commandPath, 0]);
  }
  if (path.isAbsolute(argv[0])) refusePlanted(argv[0], `hook program "${argv[0]}"`, [...commandPath, 0], specError);
  let timeoutMs = DEFAULT_HOOK_TIMEOUT_MS;
  if (hook.timeoutMs !== undefined) {
    timeoutMs = parseDuration(hook.timeoutMs);
    if (timeoutMs <= 0) throw specError(`"${formatKey([...specPath, "timeoutMs"])}" must be greater than 0`, [...specPath, "timeoutMs"]);
  }
  return { command: argv, timeoutMs };
}
