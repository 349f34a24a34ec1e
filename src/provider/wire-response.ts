/**
 * Reading Chat Completions responses into yiem's shapes (the non-streamed message, usage).
 * Rules:
 * - `tool_calls` may be a list or (TGI) a single object; calls without a function name are
 *   dropped; a missing id stays "" (the loop makes one unique in the run).
 * - Reasoning fields (`reasoning_content`, `reasoning`, `reasoning_details`) are kept exactly as
 *   received when present and not empty, to be sent back with the turn.
 * - Usage comes from `usage`, else Groq's `x_groq.usage`.
 */
import type { Usage } from "../tools/types.js";
import { REASONING_FIELDS, type AssistantMessage, type ReasoningFields, type ToolCall } from "./types.js";
import { callsWithBlock } from "./text-tool-calls.js";
import { tokenCount } from "../tools/usage.js";

type Loose = Record<string, unknown>;

const asObject = (value: unknown): Loose => (value !== null && typeof value === "object" ? (value as Loose) : {});

/**
 * A non-streamed response message as an AssistantMessage: `content` (or the refusal text when
 * there is no content), function `tool_calls` (else the call of a non-standard `tool_call`
 * field: `callsWithBlock`), reasoning fields.
 */
export function parseWireMessage(raw: unknown): AssistantMessage {
  const message = asObject(raw);
  let content = typeof message.content === "string" ? message.content : "";
  if (content === "" && typeof message.refusal === "string") content = message.refusal;
  const toolCalls: ToolCall[] = [];
  for (const item of wireToolCallList(message.tool_calls)) {
    const call = asObject(item);
    const fn = asObject(call.function);
    if (typeof fn.name !== "string" || fn.name === "") continue;
    toolCalls.push({ id: typeof call.id === "string" ? call.id : "", name: fn.name, arguments: argumentsText(fn.arguments) });
  }
  const result: AssistantMessage = { role: "assistant", content, toolCalls: callsWithBlock(toolCalls, message.tool_call) };
  if (message.tool_call !== undefined && message.tool_call !== null) result.toolCallBlock = message.tool_call;
  const reasoning = reasoningOf(message);
  if (reasoning) result.reasoning = reasoning;
  return result;
}

/** `tool_calls` as a list: a list as is, a single object (TGI) as a list of one, else empty. */
export function wireToolCallList(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (value !== null && typeof value === "object") return [value];
  return [];
}

/** The non-empty reasoning fields of a message, or undefined when it has none. */
export function reasoningOf(message: Loose): ReasoningFields | undefined {
  let found: ReasoningFields | undefined;
  for (const field of REASONING_FIELDS) {
    const value = message[field];
    if (value === undefined || value === null || value === "" || (Array.isArray(value) && value.length === 0)) continue;
    (found ??= {})[field] = value;
  }
  return found;
}

/** Arguments as the raw string; an object (some servers send one) is serialised. */
export function argumentsText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  return JSON.stringify(value);
}

/** The usage object of a completion or chunk: `usage`, else Groq's `x_groq.usage`; undefined when neither. */
export function wireUsageOf(body: Loose): unknown {
  if (body.usage !== undefined && body.usage !== null) return body.usage;
  const groq = asObject(body.x_groq);
  return groq.usage !== undefined && groq.usage !== null ? groq.usage : undefined;
}

/** Usage from the wire (`prompt_tokens` …); missing numbers count as 0 and total defaults to the sum; cached prompt tokens when reported. */
export function parseUsage(raw: unknown): Usage {
  const usage = asObject(raw);
  const count = tokenCount;
  const promptTokens = count(usage.prompt_tokens);
  const completionTokens = count(usage.completion_tokens);
  const total = count(usage.total_tokens);
  const parsed: Usage = { promptTokens, completionTokens, totalTokens: total > 0 ? total : promptTokens + completionTokens };
  // OpenAI's `prompt_tokens_details.cached_tokens`, DeepSeek's `prompt_cache_hit_tokens`.
  const cached = count(asObject(usage.prompt_tokens_details).cached_tokens) || count(usage.prompt_cache_hit_tokens);
  if (cached > 0) parsed.cachedPromptTokens = Math.min(cached, promptTokens);
  return parsed;
}

