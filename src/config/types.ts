/**
 * The agent spec: the raw file form (`AgentSpec`, mirrors schema/agent.schema.json) and the
 * resolved form every command works from (`ResolvedSpec`). Rules live in docs/spec.md.
 */
import type { Limits, ToolExecutionMode } from "../loop/types.js";
import type { Pricing } from "../loop/types.js";
import type { OutputContract, OutputMode } from "../loop/types.js";
import type { JsonSchema } from "../tools/types.js";

import type { BuiltinToolName } from "../tools/builtins/names.js";
import { MODEL_DEFAULTS } from "../provider/defaults.js";

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
  /** Stream responses: "auto" (default: stream, and stop when the server cannot stream with tools), true or false. */
  stream?: "auto" | boolean;
  /** Ask for usage in streams (`stream_options`): "auto" (default), true or false. */
  streamUsage?: "auto" | boolean;
  /** Read tool calls written into the answer's text (default false). */
  textToolCalls?: boolean;
  maxRetries?: number;
  timeoutMs?: DurationInput;
  /** USD per million tokens (no built-in prices); every usage gets `costUsd` (docs/spec.md, "Cost"). */
  pricing?: Pricing;
}

/** The spec's `output`: the final answer as JSON valid against `schema` (docs/spec.md, "Structured output"). */
export interface OutputSpec {
  /** A JSON Schema object, or a file holding one (relative to the spec's folder). */
  schema: JsonSchema | string;
  /** `tool` (default): a final-answer tool; `native`: `response_format: json_schema`. */
  mode?: OutputMode;
  /** Invalid answers sent back before the run ends `outputInvalid` (default 2). */
  retries?: number;
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
    /** Cost budget in USD (needs model.pricing); 0 = none. */
    maxCostUsd?: number;
    loopDetection?: number;
    maxToolCallsPerResponse?: number;
  };
  output?: OutputSpec;
  /** Files added to the first user message (text as fenced blocks, images as image parts), relative to the spec's folder. */
  attachments?: string[];
  hooks?: { beforeToolCall?: HookSpec; afterToolCall?: HookSpec };
  /** Strict loading (`yiem run --strict`): a tool, hook or tool glob problem ends the run, exit 2. */
  strict?: boolean;
  /** MCP servers by name (`^[a-z0-9][a-z0-9-]{0,31}$`); see docs/mcp.md. */
  mcpServers?: Record<string, McpServerSpec>;
  /** The session store (docs/sessions.md). */
  sessions?: { save?: boolean };
}

/**
 * One MCP server as written (spec `mcpServers`, or a `--mcp-config` file in the `.mcp.json`
 * shape). stdio: `command` (argv list, or a program string plus `args`); HTTP: `url`.
 */
export interface McpServerSpec {
  /** Optional, as in `.mcp.json`: "stdio" or "http" (Streamable HTTP); inferred from command/url. */
  type?: "stdio" | "http" | "streamable-http";
  command?: string[] | string;
  args?: string[];
  cwd?: string;
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
  required?: boolean;
  startupTimeoutMs?: DurationInput;
  toolTimeoutMs?: DurationInput;
  /** Globs on the server's own tool names; deny wins. */
  tools?: { allow?: string[]; deny?: string[] };
}

/**
 * A spec value set on the command line (`--set KEY.PATH=VALUE`, or a named flag for one key such
 * as `--temperature`); applied by ./flag-sets.ts, whose header states the rules.
 */
export interface SpecSet {
  /** How messages name it: `--set` (shown as `--set KEY.PATH`), `--temperature` … */
  flag: string;
  /** Dotted key path: `model.stream`. */
  key: string;
  /** The text after `=`, read as YAML; undefined when `--set` had no `=` (an error). */
  value?: string;
  /** Keep the text as a string (`--api-key-env NAME`). */
  raw?: boolean;
}

/** CLI flags that override the spec. Paths are relative to `cwd`. */
export interface SpecOverrides {
  model?: string;
  baseURL?: string;
  /** `--system`: replaces the spec's prompt (an `@FILE` is read by the CLI). */
  system?: string;
  /** `--append-system`: added after the prompt (spec's or --system's) and a blank line. */
  appendSystem?: string;
  /** Spec keys set by flags, in order (a later one wins). */
  sets?: SpecSet[];
  toolDirs?: string[];
  toolExecution?: string;
  maxTurns?: number | string;
  toolTimeoutMs?: DurationInput;
  runTimeoutMs?: DurationInput;
  /** Name globs; items may also be comma-separated lists. */
  allowTools?: string[];
  denyTools?: string[];
  /** `--strict` / `--no-strict`. */
  strict?: boolean;
  /** `--mcp-config FILE` (repeatable): more MCP servers, `{"mcpServers": {...}}` files. */
  mcpConfigs?: string[];
  /** `--no-spec-mcp`: ignore the spec's own `mcpServers`. */
  noSpecMcp?: boolean;
  /** `--output-schema FILE|JSON`: replaces `output.schema` (JSON when it starts with `{`, else a file relative to cwd). */
  outputSchema?: string;
  /** `-a/--attach PATH` (repeatable, relative to cwd; `-` is stdin): added after the spec's attachments. */
  attachments?: string[];
}

export interface LoadSpecOptions {
  cwd: string;
  /** `-c/--config FILE`: load exactly this file (relative to cwd) instead of searching. */
  configPath?: string;
  env: NodeJS.ProcessEnv;
  overrides: SpecOverrides;
  /**
   * Default true: a missing model, or a missing API key for api.openai.com, is an error (the
   * key only when nothing else is wrong). Commands that never call a model (`tools …`,
   * `config`) pass false.
   */
  requireModel?: boolean;
  /**
   * Problems the caller found on the command line (a missing prompt, a `--session` file in a
   * folder that does not exist …): reported first, in the same error as the spec's.
   */
  commandLineProblems?: string[];
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
  stream: "auto" | boolean;
  streamUsage: "auto" | boolean;
  textToolCalls: boolean;
  maxRetries: number;
  timeoutMs: number;
  pricing?: Pricing;
}

/** The resolved `output`: the schema read and checked, defaults applied; `from` names where the schema came from, for messages. */
export interface ResolvedOutput extends Required<OutputContract> {
  from: string;
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
  "model.pricing",
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
  "limits.maxCostUsd",
  "limits.loopDetection",
  "limits.maxToolCallsPerResponse",
  "hooks.beforeToolCall",
  "hooks.afterToolCall",
  "strict",
  "sessions.save",
  "output",
  "attachments",
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
  /** A tool that does not load, a program that cannot start, a tool glob that matches nothing: exit 2 before the model is called (else a warning). */
  strict: boolean;
  /** `save`: every run is saved in the session store unless `--no-save` (default false). */
  sessions: { save: boolean };
  /** Where each value came from. */
  sources: Record<SourceKey, ValueSource>;
  /** MCP servers, spec first then each `--mcp-config` file; [] when none (see config/mcp.ts). */
  mcpServers: ResolvedMcpServer[];
  /** The final answer's schema; null when none is set. */
  output: ResolvedOutput | null;
  /** The spec's, then `--attach`'s; each checked to be a regular file within the size caps (cli/attachments.ts reads them). */
  attachments: ResolvedAttachment[];
}

/** An attachment to read: an absolute path, or `-` for stdin; `name` as written (the block's title). */
export interface ResolvedAttachment {
  path: string;
  name: string;
}

/** An MCP server ready to connect. Rules: docs/mcp.md. */
export interface ResolvedMcpServer {
  name: string;
  /** Absolute path of the file that defined it. */
  definedIn: string | null;
  transport: "stdio" | "http";
  /** stdio: argv; `./` and `../` elements resolved against the defining file's folder. */
  command?: string[];
  /** stdio: absolute working folder (default: the defining file's folder). */
  cwd?: string;
  /** stdio: merged over the environment command tools get (never replacing it). */
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
  /** Default true: a server that is not ready stops the run before any model call. */
  required: boolean;
  startupTimeoutMs: number;
  /** Per call, ms; always passed to the SDK; 0 = limits.toolTimeoutMs's "none". */
  toolTimeoutMs: number;
  tools: { allow: string[]; deny: string[] };
}

export const MCP_SERVER_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;
export const DEFAULT_MCP_STARTUP_TIMEOUT_MS = 30_000;

export const DEFAULT_API_KEY_ENV = MODEL_DEFAULTS.apiKeyEnv;
export const DEFAULT_HOOK_TIMEOUT_MS = 30_000;
/** The model client's own defaults (../provider/defaults.ts), as the spec shows them. */
export const DEFAULT_MODEL_SETTINGS = { stream: MODEL_DEFAULTS.stream, maxRetries: MODEL_DEFAULTS.maxRetries, timeoutMs: MODEL_DEFAULTS.timeoutMs } as const;
export const DEFAULT_BUILTIN_TOOLS: BuiltinToolName[] = ["listTools"];
