/**
 * The tool model: what a tool is, what it returns, and how a caller sees it.
 * These types are the contract between tool files, the loop and the CLI.
 */

/** A JSON Schema document. Tool input schemas must have `type: "object"`. */
export type JsonSchema = { [key: string]: unknown };

export interface TextContent {
  type: "text";
  text: string;
}

export interface ImageContent {
  type: "image";
  /** Base64-encoded image bytes. */
  data: string;
  mimeType: string;
}

export type ContentPart = TextContent | ImageContent;

/** Token counts; every count is a non-negative integer. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Prompt tokens the server served from its cache (part of promptTokens); only when it reported some. */
  cachedPromptTokens?: number;
  /** What these tokens cost in USD; only when the spec sets `model.pricing` (loop/cost.ts). */
  costUsd?: number;
}

/** What `execute` resolves to. */
export interface ToolResult<TDetails = unknown> {
  /** What the model sees, in order. */
  content: ContentPart[];
  /** Structured data for events, hooks and callers; never sent to the model. */
  details?: TDetails;
  /** Tokens this tool spent itself (e.g. a sub-model call); added to the run's usage. */
  usage?: Partial<Usage>;
  /** When true the run ends after the current batch of tool calls finishes (stopReason `terminated`). */
  terminate?: boolean;
  /** When true the call is an error result with this content (as a throw is, but keeping the content). */
  isError?: boolean;
}

/** A progress report from a running tool. A plain string is shorthand for one text part. */
export type PartialToolResult = string | { content: ContentPart[]; details?: unknown };

export type OnPartialResult = (partial: PartialToolResult) => void;

/**
 * What a call can know of the run that makes it (`execute`'s fifth argument; absent when a tool
 * is called outside a run). The run's own view: another run on the same registry may offer
 * other tools.
 */
export interface ToolRunContext {
  /** Whether the run offers `name` (its policy allows it). */
  isOffered(name: string): boolean;
  /** The tools the run offers now, in registration order. */
  offeredTools(): Tool[];
}

/**
 * A tool. Rules:
 * - `name` matches `^[A-Za-z][A-Za-z0-9_-]{0,63}$` and is unique among loaded tools.
 * - `inputSchema` is an object schema; arguments are validated against it (ajv, all errors,
 *   formats, defaults applied, scalar coercion) before `execute` is ever called.
 * - `prepareArguments` runs first and may reshape raw arguments (e.g. accept legacy names).
 * - `validateRequiredArgs` runs after schema validation; return an error message to reject.
 * - `execute` must honour `signal`; throwing (or rejecting) becomes an error result.
 * - `parallelToolExecute: false` makes every call to this tool run alone (default true).
 */
export interface Tool<TArgs = any, TDetails = unknown> {
  name: string;
  label: string;
  description: string;
  inputSchema: JsonSchema;
  execute(
    toolCallId: string,
    args: TArgs,
    signal: AbortSignal,
    onPartialResult: OnPartialResult,
    run?: ToolRunContext,
  ): Promise<ToolResult<TDetails>> | ToolResult<TDetails>;
  prepareArguments?(args: unknown): unknown | Promise<unknown>;
  validateRequiredArgs?(args: TArgs): string | undefined | void | Promise<string | undefined | void>;
  parallelToolExecute?: boolean;
  /** Per-call timeout for this tool, overriding the run's `toolTimeoutMs`. */
  timeoutMs?: number;
  /** Set on tools of MCP servers: the server and its own tool name (carried by tool events). */
  mcp?: McpOrigin;
}

/** Where an MCP tool comes from: the server's name and the server's own name for the tool. */
export interface McpOrigin {
  server: string;
  tool: string;
}

/** Where a loaded tool came from. `builtin` tools have no file. */
export interface ToolSource {
  kind: "file" | "command" | "builtin" | "registered" | "mcp";
  /** Absolute path of the tool file, when there is one. */
  path?: string;
  /** The MCP server of an `mcp` tool. */
  server?: string;
  /**
   * Model-written (`writeTool`, this run or an earlier one: a file of the spec's writeToolDir):
   * beforeToolCall sees a call's arguments before any of the tool's own code runs (loop/prepare.ts).
   */
  generated?: true;
}

/** A tool file that could not be loaded; every other tool still loads. */
export interface ToolLoadProblem {
  path: string;
  reason: string;
}

/** The tool definition a model or user sees (no code). */
export interface ToolInfo {
  name: string;
  label: string;
  description: string;
  inputSchema: JsonSchema;
  parallelToolExecute: boolean;
  source: ToolSource;
}
