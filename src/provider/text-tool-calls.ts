/**
 * Tool calls written into the answer's text, for servers without a tool-call parser (opt-in:
 * `model.textToolCalls`). Read only when the response has no `tool_calls` and no `tool_call`
 * field (see `callsWithBlock`). Two forms:
 * - `<tool_call>{"name": …, "arguments": …}</tool_call>`, one or several (Hermes, Qwen, old
 *   Ollama); a last tag the model left unclosed counts when the rest is the JSON. The text
 *   outside the tags stays the assistant's text (trimmed). A tag whose content is not a JSON
 *   object with a string `name` is not a call and stays in the text as written.
 * - the whole answer a JSON object `{"tool_call": {…}}`, optionally in one fenced code block;
 *   the answer's text is then "".
 * A call is `{name, arguments}` or `{function: {name, arguments}}`; `args` and `parameters` are
 * accepted for `arguments`; an id is taken when given, else left "" for the loop to make.
 * Parsing is linear in the answer's length (no backtracking pattern): a 1 MB hostile answer
 * takes milliseconds, so it cannot hold the run past its deadline.
 */
import type { AssistantMessage, ModelRequest, Provider, ToolCall } from "./types.js";
import { isPlainObject } from "../tools/arguments.js";

export interface TextToolCalls {
  toolCalls: ToolCall[];
  /** The text that remains the assistant's answer. */
  content: string;
}

/** The calls written in `content`, or null when it holds none (see module rules). */
export function parseTextToolCalls(content: string): TextToolCalls | null {
  if (content.includes(OPEN_TAG)) {
    const tagged = parseTaggedCalls(content);
    if (tagged) return tagged;
  }
  const call = blockToCall(parseContentBlock(content));
  return call ? { toolCalls: [call], content: "" } : null;
}

/** A provider whose answers have their text-embedded calls turned into tool calls. */
export function withTextToolCalls(provider: Provider): Provider {
  return {
    model: provider.model,
    async complete(request: ModelRequest) {
      const response = await provider.complete(request);
      const message = withCallsFromText(response.message);
      return message === response.message ? response : { ...response, message };
    },
    ...(provider.describeRequest ? { describeRequest: provider.describeRequest.bind(provider) } : {}),
  };
}

/** `message` with its text-embedded calls parsed, or `message` itself when there is nothing to parse. */
export function withCallsFromText(message: AssistantMessage): AssistantMessage {
  if (message.toolCalls.length > 0 || (message.toolCallBlock !== undefined && message.toolCallBlock !== null)) return message;
  const parsed = parseTextToolCalls(message.content);
  return parsed ? { ...message, content: parsed.content, toolCalls: parsed.toolCalls } : message;
}

const OPEN_TAG = "<tool_call>";
const CLOSE_TAG = "</tool_call>";

function parseTaggedCalls(content: string): TextToolCalls | null {
  const toolCalls: ToolCall[] = [];
  const kept: string[] = [];
  let at = 0;
  for (;;) {
    const open = content.indexOf(OPEN_TAG, at);
    if (open < 0) break;
    const close = content.indexOf(CLOSE_TAG, open + OPEN_TAG.length);
    const inner = content.slice(open + OPEN_TAG.length, close < 0 ? content.length : close);
    const end = close < 0 ? content.length : close + CLOSE_TAG.length;
    const call = blockToCall(parseJsonObject(inner));
    kept.push(content.slice(at, open));
    if (call) toolCalls.push(call);
    else kept.push(content.slice(open, end));
    at = end;
    if (close < 0) break;
  }
  kept.push(content.slice(at));
  if (toolCalls.length === 0) return null;
  return { toolCalls, content: kept.join("").trim() };
}

function parseContentBlock(content: string): unknown {
  const trimmed = content.trim();
  if (!trimmed.includes("tool_call")) return undefined;
  const parsed = parseJsonObject(fencedBody(trimmed) ?? trimmed);
  return parsed ? parsed.tool_call : undefined;
}

const FENCE = "```";

/**
 * The body of `text` when the whole of it is one fenced code block: the opening fence, an
 * optional language word (letters), white space ending in a line break, the body, the closing
 * fence. One pass, no regular expression (a backtracking one was quadratic on hostile text).
 */
function fencedBody(text: string): string | undefined {
  if (text.length < 2 * FENCE.length || !text.startsWith(FENCE) || !text.endsWith(FENCE)) return undefined;
  const closing = text.length - FENCE.length;
  let at = FENCE.length;
  while (at < closing && /[A-Za-z]/.test(text[at])) at++;
  let bodyStart = -1;
  for (; at < closing && /\s/.test(text[at]); at++) if (text[at] === "\n") bodyStart = at + 1;
  return bodyStart < 0 ? undefined : text.slice(bodyStart, closing);
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  const json = text.trim();
  if (!json.startsWith("{")) return undefined;
  try {
    const parsed: unknown = JSON.parse(json);
    return isPlainObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** A call from `{name, arguments, id?}` or `{function: {name, arguments}, id?}`; null when it names no function. */
/**
 * The calls of a response: its `tool_calls`, else the call of a non-standard single `tool_call`
 * block (`{name, arguments, id?}` on the message) when it is one. The provider normalises this
 * wire detail; the loop only ever sees `toolCalls`. An id left out stays "" (the loop makes one).
 */
export function callsWithBlock(toolCalls: ToolCall[], block: unknown): ToolCall[] {
  if (toolCalls.length > 0 || block === undefined || block === null) return toolCalls;
  const call = blockToCall(block);
  return call ? [call] : toolCalls;
}

export function blockToCall(block: unknown): ToolCall | null {
  if (!isPlainObject(block)) return null;
  const fn = isPlainObject(block.function) ? block.function : block;
  if (typeof fn.name !== "string" || fn.name === "") return null;
  const args = fn.arguments ?? fn.args ?? fn.parameters ?? {};
  return {
    id: typeof block.id === "string" ? block.id : "",
    name: fn.name,
    arguments: typeof args === "string" ? args : JSON.stringify(args),
  };
}
