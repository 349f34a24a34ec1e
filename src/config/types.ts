/**
 * The agent spec: the raw file form (`AgentSpec`, mirrors schema/agent.schema.json) and the
 * resolved form every command works from (`ResolvedSpec`). Rules live in docs/spec.md.
 */
import type { Limits, ToolExecutionMode } from "../loop/types.js";

export type BuiltinToolName = "listTools" | "writeTool";

/** Milliseconds, or a string like "500ms", "30s", "2m", "1h", "1500". */
export type DurationInput = number | string;

/** A hook as written: a module path, or a command run without a shell. */
export type HookSpec = string | { command: string[] | string; timeoutMs?: DurationInput };

export interface ModelSpec {
  name: string;
  baseURL?: string;
  /** The NAME of the environment variable holding the key. */
  apiKeyEnv?: string;
  temperature?: number;
  maxTokens?: number;
  /** The request field for maxTokens: `max_tokens` (default) or `max_completion_tokens`. */
  maxTokensField?: "max_tokens" | "max_completion_tokens";
  stream?: boolean;
  /** Ask for usage in streams (`stream_options`): "auto" (default), true or false. */
  streamUsage?: "auto" | boolean;
  /** Read tool calls written into the answer's text (default false). */
  textToolCalls?: boolean;
  maxRetries?: number;
  timeoutMs?: DurationInput;
}

/** The spec as written in agent.config.yaml (after `${VAR}` interpolation). */
export interface AgentSpec {
  $schema?: string;
  name?: string;
  systemPrompt?: string;
  systemPromptFile?: string;
  model?: string | ModelSpec;
  toolDirs?: string[];
  builtinTools?: BuiltinToolName[];
  writeToolDir?: string;
  toolExecution?: ToolExecutionMode;
  tools?: { allow?: string[]; deny?: string[] };
  limits?: {
    maxTurns?: number;
    toolTimeoutMs?: DurationInput;
    runTimeoutMs?: DurationInput;
    maxConcurrency?: number;
    maxTokens?: number;
    loopDetection?: number;
    maxToolCallsPerResponse?: number;
  };
  hooks?: { beforeToolCall?: HookSpec; afterToolCall?: HookSpec };
}

/** CLI flags that override the spec. Paths are relative to `cwd`. */
export interface SpecOverrides {
  model?: string;
  baseURL?: string;
  system?: string;
  toolDirs?: string[];
  toolExecution?: string;
  maxTurns?: number | string;
  toolTimeoutMs?: DurationInput;
  runTimeoutMs?: DurationInput;
  /** Name globs; items may also be comma-separated lists. */
  allowTools?: string[];
  denyTools?: string[];
}

export interface LoadSpecOptions {
  cwd: string;
  /** `-c/--config FILE`: load exactly this file (relative to cwd) instead of searching. */
  configPath?: string;
  env: NodeJS.ProcessEnv;
  overrides: SpecOverrides;
  /**
   * Default true: a missing model, or a missing API key for api.openai.com, is an error.
   * Commands that never call a model (`tools …`, `config`) pass false.
   */
  requireModel?: boolean;
}

export interface ResolvedModel {
  /** Model name; `replay:<absolute path>` for the replay model; "" when none (requireModel false). */
  name: string;
  /** Absolute path of the replay file when `name` uses the `replay:` scheme. */
  replayFile?: string;
  /** Unset means the OpenAI default (https://api.openai.com/v1). */
  baseURL?: string;
  apiKeyEnv: string;
  /** The secret itself, from env[apiKeyEnv]. Never print it: use redactSpec. */
  apiKey?: string;
  temperature?: number;
  maxTokens?: number;
  maxTokensField: "max_tokens" | "max_completion_tokens";
  stream: boolean;
  streamUsage: "auto" | boolean;
  textToolCalls: boolean;
  maxRetries: number;
  timeoutMs: number;
}

/** A resolved hook: an absolute module path, or a command argv with ./ paths made absolute. */
export type ResolvedHook = string | { command: string[]; timeoutMs: number };

export type ValueSource = "flag" | "env" | "spec" | "default";

/** Every value `sources` reports, in display order. */
export const SOURCE_KEYS = [
  "name",
  "systemPrompt",
  "model.name",
  "model.baseURL",
  "model.apiKeyEnv",
  "model.apiKey",
  "model.temperature",
  "model.maxTokens",
  "model.maxTokensField",
  "model.stream",
  "model.streamUsage",
  "model.textToolCalls",
  "model.maxRetries",
  "model.timeoutMs",
  "toolDirs",
  "builtinTools",
  "writeToolDir",
  "toolExecution",
  "tools.allow",
  "tools.deny",
  "limits.maxTurns",
  "limits.toolTimeoutMs",
  "limits.runTimeoutMs",
  "limits.maxConcurrency",
  "limits.maxTokens",
  "limits.loopDetection",
  "limits.maxToolCallsPerResponse",
  "hooks.beforeToolCall",
  "hooks.afterToolCall",
] as const;

export type SourceKey = (typeof SOURCE_KEYS)[number];

export interface ResolvedSpec {
  /** Absolute path of the spec file, or null when none was found. */
  configPath: string | null;
  /** The folder spec-relative paths resolved against (the spec's folder, else cwd). */
  baseDir: string;
  name: string | null;
  /** "" when none was given. */
  systemPrompt: string;
  model: ResolvedModel;
  /** Absolute, existing folders, in order. */
  toolDirs: string[];
  builtinTools: BuiltinToolName[];
  /** Absolute; the first toolDir by default; null when there is neither. */
  writeToolDir: string | null;
  toolExecution: ToolExecutionMode;
  tools: { allow: string[]; deny: string[] };
  limits: Limits;
  hooks: { beforeToolCall?: ResolvedHook; afterToolCall?: ResolvedHook };
  /** Where each value came from. */
  sources: Record<SourceKey, ValueSource>;
}

export const DEFAULT_API_KEY_ENV = "OPENAI_API_KEY";
export const DEFAULT_HOOK_TIMEOUT_MS = 30_000;
export const DEFAULT_MODEL_SETTINGS = { stream: true, maxRetries: 2, timeoutMs: 600_000 } as const;
export const DEFAULT_BUILTIN_TOOLS: BuiltinToolName[] = ["listTools"];
