/**
 * The model provider contract: one small interface over Chat Completions, replay files and
 * scripted test models. Messages here are yiem's own shape; providers translate to the wire.
 */
import type { ContentPart, ImageContent, JsonSchema, Usage } from "../tools/types.js";
import type { SdkLogLine } from "./sdk-log.js";

/**
 * One tool call as the model emitted it. `arguments` is the raw string, never parsed here.
 * `id` is "" when the server sent none; the loop then gives it an id unique in the run.
 */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface SystemMessage {
  role: "system";
  content: string;
}

export interface UserMessage {
  role: "user";
  content: string;
  /** Images sent with the text (attachments, cli/attachments.ts), in order, after it. */
  images?: ImageContent[];
}

export interface AssistantMessage {
  role: "assistant";
  /** Text of the answer; "" when the model only called tools. */
  content: string;
  /** Calls in OpenAI `tool_calls` form, in the order the model emitted them. */
  toolCalls: ToolCall[];
  /**
   * The non-standard single `tool_call` block some servers put on the message, as received (for
   * recordings). Already normalised into `toolCalls` by the provider (text-tool-calls.ts
   * `callsWithBlock`): the loop reads `toolCalls` only.
   */
  toolCallBlock?: unknown;
  /**
   * The reasoning fields the server put on this turn (`reasoning_content`, `reasoning`,
   * `reasoning_details`), exactly as received (streamed pieces joined). Sent back on later
   * requests only to the server that sent them: some servers refuse turn 2 without them, others
   * refuse them.
   */
  reasoning?: ReasoningFields;
}

/**
 * Reasoning fields of an assistant turn, keyed by their wire name, plus `from`: the server that
 * sent them (`model at baseURL`, set by the provider). They go back only to that server (see
 * reasoning.ts); `from` itself is never sent.
 */
export type ReasoningFields = Partial<Record<ReasoningField, unknown>> & { from?: string };

export const REASONING_FIELDS = ["reasoning_content", "reasoning", "reasoning_details"] as const;
export type ReasoningField = (typeof REASONING_FIELDS)[number];

export interface ToolResultMessage {
  role: "tool";
  toolCallId: string;
  toolName: string;
  content: ContentPart[];
  isError: boolean;
}

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

/** A tool as offered to the model. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** `stop`, `tool_calls`, `length`, `content_filter`, or whatever the server said; `unknown` when absent. */
export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter" | "unknown" | (string & {});

export interface RetryInfo {
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  /** HTTP status, or null for a connection error. */
  status: number | null;
  message: string;
}

/** `response_format: {type: "json_schema", json_schema: {name, schema, strict}}` (structured output, native mode). */
export interface ResponseFormat {
  name: string;
  schema: JsonSchema;
  strict: boolean;
}

export interface ModelRequest {
  messages: ChatMessage[];
  tools: ToolSpec[];
  /** Asks the server for an answer valid against a JSON Schema; providers without a server ignore it. */
  responseFormat?: ResponseFormat;
  signal: AbortSignal;
  /** Called with each streamed piece of assistant text, as it arrives. */
  onTextDelta?: (delta: string) => void;
  /** Called before each retry of a failed request. */
  onRetry?: (info: RetryInfo) => void;
  /** Called with each log line the openai package writes while serving this request (./sdk-log.ts). */
  onSdkLog?: (line: SdkLogLine) => void;
}

export interface ModelResponse {
  message: AssistantMessage;
  usage: Usage;
  finishReason: FinishReason;
}

/** Thrown by providers for failures the run cannot recover from (after retries). */
export class ModelError extends Error {
  readonly status: number | null;
  constructor(message: string, status: number | null = null, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ModelError";
    this.status = status;
  }
}

export interface Provider {
  /** Model name as reported in events, e.g. `gpt-4o-mini` or `replay:demo.jsonl`. */
  readonly model: string;
  complete(request: ModelRequest): Promise<ModelResponse>;
  /** The request body that would be sent for `request` (for `--dry-run`); no secrets. */
  describeRequest?(request: Omit<ModelRequest, "signal">): unknown;
}
