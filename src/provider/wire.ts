/**
 * Translation between yiem's messages and the Chat Completions wire format.
 * Rules:
 * - Tools go out as `{type: "function", function: {name, description, parameters}}`; no `tools`
 *   key at all when there are none (some servers reject an empty list).
 * - A tool message carries text only: image parts become a text placeholder there, and the images
 *   follow in one user message (`image_url` data URLs) after the run of tool messages they belong to.
 * - An assistant message with tool calls and no text sends `content: null`.
 * - `max_tokens` (not `max_completion_tokens`) is sent, as OpenAI-compatible servers widely accept it.
 */
import type { ContentPart, ImageContent, Usage } from "../tools/types.js";
import type { AssistantMessage, ChatMessage, ToolCall, ToolResultMessage, ToolSpec } from "./types.js";

export type WireContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } };

export type WireMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | WireContentPart[] }
  | { role: "assistant"; content: string | null; tool_calls?: WireToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

export interface WireToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface WireTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** Settings that shape the request body besides the conversation. */
export interface BodySettings {
  model: string;
  temperature?: number;
  maxTokens?: number;
  stream: boolean;
}

export interface WireRequestBody {
  model: string;
  messages: WireMessage[];
  tools?: WireTool[];
  temperature?: number;
  max_tokens?: number;
  stream?: true;
  stream_options?: { include_usage: true };
}

/** The exact JSON body sent to `POST /chat/completions`. */
export function buildRequestBody(settings: BodySettings, messages: ChatMessage[], tools: ToolSpec[]): WireRequestBody {
  const body: WireRequestBody = { model: settings.model, messages: toWireMessages(messages) };
  if (tools.length > 0) body.tools = tools.map(toWireTool);
  if (settings.temperature !== undefined) body.temperature = settings.temperature;
  if (settings.maxTokens !== undefined && settings.maxTokens > 0) body.max_tokens = settings.maxTokens;
  if (settings.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

export function toWireTool(tool: ToolSpec): WireTool {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

/** Translate a conversation; images from tool results follow each run of tool messages. */
export function toWireMessages(messages: ChatMessage[]): WireMessage[] {
  const out: WireMessage[] = [];
  let pendingImages: WireContentPart[] = [];
  const flushImages = () => {
    if (pendingImages.length > 0) out.push({ role: "user", content: pendingImages });
    pendingImages = [];
  };
  for (const message of messages) {
    if (message.role !== "tool") flushImages();
    switch (message.role) {
      case "system":
        out.push({ role: "system", content: message.content });
        break;
      case "user":
        out.push({ role: "user", content: message.content });
        break;
      case "assistant":
        out.push(toWireAssistant(message));
        break;
      case "tool": {
        const { text, images } = splitToolContent(message);
        out.push({ role: "tool", tool_call_id: message.toolCallId, content: text });
        if (images.length > 0) {
          pendingImages.push({ type: "text", text: `Images returned by tool ${message.toolName} (call ${message.toolCallId}):` });
          for (const image of images) pendingImages.push({ type: "image_url", image_url: { url: imageDataUrl(image) } });
        }
        break;
      }
    }
  }
  flushImages();
  return out;
}

function toWireAssistant(message: AssistantMessage): WireMessage {
  if (message.toolCalls.length === 0) return { role: "assistant", content: message.content };
  return {
    role: "assistant",
    content: message.content === "" ? null : message.content,
    tool_calls: message.toolCalls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.arguments },
    })),
  };
}

/** Text parts joined by newlines; each image is replaced by a placeholder line. */
function splitToolContent(message: ToolResultMessage): { text: string; images: ImageContent[] } {
  const lines: string[] = [];
  const images: ImageContent[] = [];
  for (const part of message.content) {
    if (part.type === "text") lines.push(part.text);
    else {
      images.push(part);
      lines.push(`[image ${images.length} (${part.mimeType}) is attached in the next user message]`);
    }
  }
  return { text: lines.join("\n"), images };
}

export function imageDataUrl(image: ImageContent): string {
  return `data:${image.mimeType};base64,${image.data}`;
}

/** The text of a tool result: its text parts joined by newlines. */
export function contentText(parts: ContentPart[]): string {
  return parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
}

// ---- responses ----

type Loose = Record<string, unknown>;

/**
 * A non-streamed response message as an AssistantMessage: `content` (or the refusal text when
 * there is no content), function `tool_calls` (an id is made up when missing), and a non-standard
 * `tool_call` field passed through as `toolCallBlock`.
 */
export function parseWireMessage(raw: unknown): AssistantMessage {
  const message = (raw !== null && typeof raw === "object" ? raw : {}) as Loose;
  let content = typeof message.content === "string" ? message.content : "";
  if (content === "" && typeof message.refusal === "string") content = message.refusal;
  const toolCalls: ToolCall[] = [];
  const wireCalls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  for (const item of wireCalls) {
    const call = (item ?? {}) as Loose;
    const fn = (call.function ?? {}) as Loose;
    if (typeof fn.name !== "string") continue;
    toolCalls.push({
      id: typeof call.id === "string" && call.id !== "" ? call.id : fallbackCallId(toolCalls.length),
      name: fn.name,
      arguments: argumentsText(fn.arguments),
    });
  }
  const result: AssistantMessage = { role: "assistant", content, toolCalls };
  if (message.tool_call !== undefined && message.tool_call !== null) result.toolCallBlock = message.tool_call;
  return result;
}

/** Arguments as the raw string; an object (some servers send one) is serialised. */
export function argumentsText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  return JSON.stringify(value);
}

/** An id for a call the server sent without one. */
export function fallbackCallId(index: number): string {
  return `call_${index}`;
}

/** Usage from the wire (`prompt_tokens` …); missing numbers count as 0 and total defaults to the sum. */
export function parseUsage(raw: unknown): Usage {
  const usage = (raw !== null && typeof raw === "object" ? raw : {}) as Loose;
  const count = (value: unknown) => (typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0);
  const promptTokens = count(usage.prompt_tokens);
  const completionTokens = count(usage.completion_tokens);
  const total = count(usage.total_tokens);
  return { promptTokens, completionTokens, totalTokens: total > 0 ? total : promptTokens + completionTokens };
}

export function zeroUsage(): Usage {
  return { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
}
