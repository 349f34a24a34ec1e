/**
 * Translation between yiem's messages and the Chat Completions wire format.
 * Rules:
 * - Tools go out as `{type: "function", function: {name, description, parameters}}`; no `tools`
 *   key at all when there are none (some servers reject an empty list).
 * - A user message with images (attachments) sends its content as parts: the text, then one
 *   `image_url` data URL per image.
 * - A tool message carries text only: image parts become a text placeholder there, and the images
 *   follow in one user message (`image_url` data URLs) after the run of tool messages they belong to.
 * - An assistant message with tool calls and no text sends `content: null`.
 * - A call's `arguments` go back as the model sent them when they are a JSON object; arguments
 *   yiem read another way (`""`, a double-encoded object) go back as the object it read; any
 *   other text (cut by the length limit, not JSON, not an object) goes back as `{}`, since some
 *   servers refuse the whole request otherwise (llama.cpp: HTTP 500 "Failed to parse tool call
 *   arguments as JSON"). Such a call was rejected, and its raw text is in the rejection's tool
 *   result and in the events.
 * - The token limit goes out as `max_tokens` (widely accepted), or as `max_completion_tokens` when
 *   `maxTokensField` says so (OpenAI's reasoning models refuse `max_tokens`; Mistral the other).
 * - A request with a `responseFormat` (structured output, native mode) carries
 *   `response_format: {type: "json_schema", json_schema: {name, schema, strict}}`.
 * - A streamed request asks for usage (`stream_options.include_usage`) unless `streamUsage` is false.
 * - A tool message carries the tool's `name` (Gemini requires it; others accept it).
 * - An assistant message carries back the reasoning fields the server sent with it, and only those
 *   (the provider first drops reasoning that came from another server: see reasoning.ts).
 * - `serializeRequestBytes` (what is sent; `serializeRequestBody` as text) is exactly the UTF-8 of
 *   `JSON.stringify(buildRequestBody(…))`, but serialises each message once: its JSON is cached by
 *   message identity together with a snapshot of every field the conversion reads, so a
 *   conversation that grows turn by turn costs only its new messages, and a message changed in
 *   place is serialised again.
 */
import type { ContentPart, ImageContent } from "../tools/types.js";
import { isPlainObject, parseToolArguments } from "../tools/arguments.js";
import { REASONING_FIELDS, type AssistantMessage, type ChatMessage, type ReasoningFields, type ResponseFormat, type ToolResultMessage, type ToolSpec } from "./types.js";
import { contentText as textOfContent } from "../tools/content.js";

export type MaxTokensField = "max_tokens" | "max_completion_tokens";

export type WireContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } };

export type WireMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | WireContentPart[] }
  | ({ role: "assistant"; content: string | null; tool_calls?: WireToolCall[] } & ReasoningFields)
  | { role: "tool"; tool_call_id: string; name: string; content: string };

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
  /** Default `max_tokens`. */
  maxTokensField?: MaxTokensField;
  stream: boolean;
  /** Send `stream_options.include_usage` with a streamed request (default true). */
  streamUsage?: boolean;
}

export interface WireRequestBody {
  model: string;
  messages: WireMessage[];
  tools?: WireTool[];
  temperature?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stream?: true;
  stream_options?: { include_usage: true };
  response_format?: { type: "json_schema"; json_schema: { name: string; schema: Record<string, unknown>; strict: boolean } };
}

/** The exact JSON body sent to `POST /chat/completions`. */
export function buildRequestBody(settings: BodySettings, messages: ChatMessage[], tools: ToolSpec[], responseFormat?: ResponseFormat): WireRequestBody {
  const body: WireRequestBody = { model: settings.model, messages: toWireMessages(messages) };
  if (tools.length > 0) body.tools = tools.map(toWireTool);
  if (responseFormat) {
    body.response_format = { type: "json_schema", json_schema: { name: responseFormat.name, schema: responseFormat.schema, strict: responseFormat.strict } };
  }
  if (settings.temperature !== undefined) body.temperature = settings.temperature;
  if (settings.maxTokens !== undefined && settings.maxTokens > 0) body[settings.maxTokensField ?? "max_tokens"] = settings.maxTokens;
  if (settings.stream) {
    body.stream = true;
    if (settings.streamUsage !== false) body.stream_options = { include_usage: true };
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
    const converted = convertUncached(message);
    if (!converted) continue;
    out.push(converted.wire);
    if (converted.images.length > 0) pendingImages.push(...converted.images);
  }
  flushImages();
  return out;
}

/**
 * The request body as the JSON text sent on the wire: `JSON.stringify(buildRequestBody(…))`.
 * See `serializeRequestBytes`.
 */
export function serializeRequestBody(settings: BodySettings, messages: ChatMessage[], tools: ToolSpec[], responseFormat?: ResponseFormat): string {
  return serializeRequestBytes(settings, messages, tools, responseFormat).toString("utf8");
}

/**
 * The request body as the UTF-8 bytes sent on the wire: `JSON.stringify(buildRequestBody(…))`.
 * Each message's JSON is made once (see module rules), and the joined JSON of a conversation is
 * kept as bytes with the conversation array, so the next request of the same run re-checks the
 * earlier messages (reference and field comparisons only) and appends just the new ones. Bytes,
 * not a string: a growing string would be copied whole (flattened, then encoded) per request.
 */
export function serializeRequestBytes(settings: BodySettings, messages: ChatMessage[], tools: ToolSpec[], responseFormat?: ResponseFormat): Buffer {
  let prefix = joinedPrefixes.get(messages);
  if (!prefix || !prefixStillValid(prefix, messages)) {
    prefix = { messages: [], entries: [], bytes: EMPTY_BYTES, length: 0 };
    joinedPrefixes.set(messages, prefix);
  }
  const kept = prefix;
  /** The prefix grows while no image waits for the next user message; the rest is joined here. */
  let growing = true;
  const rest: string[] = [];
  let pendingImages: WireContentPart[] = [];
  for (let i = kept.messages.length; i < messages.length; i++) {
    const message = messages[i];
    if (message.role !== "tool" && pendingImages.length > 0) {
      rest.push(JSON.stringify({ role: "user", content: pendingImages }));
      pendingImages = [];
    }
    const converted = convertMessage(message);
    if (!converted) {
      // An unknown role is left out of the body; the kept prefix ends before it.
      growing = false;
      continue;
    }
    if (converted.images.length > 0) pendingImages.push(...converted.images);
    if (growing && pendingImages.length === 0) appendToPrefix(kept, message, converted);
    else {
      growing = false;
      rest.push(converted.json);
    }
  }
  if (pendingImages.length > 0) rest.push(JSON.stringify({ role: "user", content: pendingImages }));
  // Every key but `messages`, in buildRequestBody's order; `model` is the only key before it, and a
  // JSON string cannot contain an unescaped quote, so the first `"messages":[]` is the key itself.
  const head = JSON.stringify(buildRequestBody(settings, [], tools, responseFormat));
  const at = head.indexOf(EMPTY_MESSAGES) + EMPTY_MESSAGES.length - 1;
  const before = head.slice(0, at);
  const after = head.slice(at);
  const restText = rest.length === 0 ? "" : `${kept.length > 0 ? "," : ""}${rest.join(",")}`;
  const beforeLength = Buffer.byteLength(before);
  const restLength = Buffer.byteLength(restText);
  const body = Buffer.allocUnsafe(beforeLength + kept.length + restLength + Buffer.byteLength(after));
  let offset = body.write(before, 0);
  // Uint8Array#set, not Buffer#copy: the same memcpy without Buffer's slower JS wrapper.
  body.set(kept.bytes.subarray(0, kept.length), offset);
  offset += kept.length;
  if (restLength > 0) offset += body.write(restText, offset);
  body.write(after, offset);
  return body;
}

/** The JSON of a conversation's first `messages.length` messages, joined by commas, as UTF-8 bytes. */
interface JoinedPrefix {
  messages: ChatMessage[];
  entries: ConvertedMessage[];
  /** Holds the joined JSON in its first `length` bytes; grows by doubling. */
  bytes: Buffer;
  length: number;
}

const EMPTY_BYTES = Buffer.alloc(0);

const joinedPrefixes = new WeakMap<ChatMessage[], JoinedPrefix>();

function appendToPrefix(prefix: JoinedPrefix, message: ChatMessage, converted: ConvertedMessage): void {
  const separator = prefix.length > 0 ? 1 : 0;
  const needed = prefix.length + separator + Buffer.byteLength(converted.json);
  if (needed > prefix.bytes.length) {
    const grown = Buffer.allocUnsafe(Math.max(needed, prefix.bytes.length * 2, 1024));
    grown.set(prefix.bytes.subarray(0, prefix.length));
    prefix.bytes = grown;
  }
  if (separator) prefix.bytes[prefix.length++] = COMMA;
  prefix.length += prefix.bytes.write(converted.json, prefix.length);
  prefix.messages.push(message);
  prefix.entries.push(converted);
}

const COMMA = 0x2c;

function prefixStillValid(prefix: JoinedPrefix, messages: ChatMessage[]): boolean {
  if (prefix.messages.length > messages.length) return false;
  for (let i = 0; i < prefix.messages.length; i++) {
    if (messages[i] !== prefix.messages[i] || !fieldsMatch(messages[i], prefix.entries[i].fields)) return false;
  }
  return true;
}

const EMPTY_MESSAGES = '"messages":[]';

/** One message as wire JSON, plus the image parts it adds to the next user message. */
interface ConvertedMessage {
  json: string;
  images: WireContentPart[];
  /** Every field of the source message the conversion read, in visiting order. */
  fields: unknown[];
}

const converted = new WeakMap<ChatMessage, ConvertedMessage>();

/** The cached conversion of `message`, made again when a field changed; null for an unknown role. */
function convertMessage(message: ChatMessage): ConvertedMessage | null {
  const cached = converted.get(message);
  if (cached && fieldsMatch(message, cached.fields)) return cached;
  const uncached = convertUncached(message);
  if (!uncached) return null;
  const fresh = { json: JSON.stringify(uncached.wire), images: uncached.images, fields: fieldsOf(message) };
  converted.set(message, fresh);
  return fresh;
}

/**
 * Every field the wire form depends on, in a fixed order: role, then system/user `content` (and a user message's `images`, by identity);
 * assistant `content`, `reasoning` (by identity) and `id, name, arguments` of each call; tool `toolCallId`, `toolName` and
 * `type` plus `text` or `mimeType, data` of each part. `fieldsMatch` reads the same order.
 */
function fieldsOf(message: ChatMessage): unknown[] {
  switch (message.role) {
    case "system":
      return [message.role, message.content];
    case "user":
      return message.images?.length ? [message.role, message.content, message.images] : [message.role, message.content];
    case "assistant":
      return [message.role, message.content, message.reasoning, ...message.toolCalls.flatMap((c) => [c.id, c.name, c.arguments])];
    case "tool":
      return [message.role, message.toolCallId, message.toolName,
        ...message.content.flatMap((p) => (p.type === "text" ? [p.type, p.text] : [p.type, p.mimeType, p.data]))];
  }
}

/** Whether `message` still has the `fields` it was converted from (no closures: this runs per message per request). */
function fieldsMatch(message: ChatMessage, fields: unknown[]): boolean {
  if (message.role !== fields[0]) return false;
  switch (message.role) {
    case "system":
      return fields.length === 2 && message.content === fields[1];
    case "user":
      return message.content === fields[1] && (message.images?.length ? fields.length === 3 && message.images === fields[2] : fields.length === 2);
    case "assistant": {
      const calls = message.toolCalls;
      if (message.content !== fields[1] || message.reasoning !== fields[2] || fields.length !== 3 + 3 * calls.length) return false;
      for (let i = 0, j = 3; i < calls.length; i++, j += 3) {
        const call = calls[i];
        if (call.id !== fields[j] || call.name !== fields[j + 1] || call.arguments !== fields[j + 2]) return false;
      }
      return true;
    }
    case "tool": {
      if (message.toolCallId !== fields[1] || message.toolName !== fields[2]) return false;
      const parts = message.content;
      let j = 3;
      for (let i = 0; i < parts.length; i++) {
        const part = parts[i];
        if (part.type !== fields[j++]) return false;
        if (part.type === "text") {
          if (part.text !== fields[j++]) return false;
        } else if (part.mimeType !== fields[j++] || part.data !== fields[j++]) return false;
      }
      return j === fields.length;
    }
    default:
      return false;
  }
}

/** One message in wire form, plus the image parts it adds to the next user message; null for an unknown role. */
function convertUncached(message: ChatMessage): { wire: WireMessage; images: WireContentPart[] } | null {
  switch (message.role) {
    case "system":
      return { wire: { role: "system", content: message.content }, images: [] };
    case "user":
      if (!message.images?.length) return { wire: { role: "user", content: message.content }, images: [] };
      return {
        wire: { role: "user", content: [{ type: "text", text: message.content }, ...message.images.map((image) => ({ type: "image_url" as const, image_url: { url: imageDataUrl(image) } }))] },
        images: [],
      };
    case "assistant":
      return { wire: toWireAssistant(message), images: [] };
    case "tool": {
      const { text, images } = splitToolContent(message);
      const wire: WireMessage = { role: "tool", tool_call_id: message.toolCallId, name: message.toolName, content: text };
      if (images.length === 0) return { wire, images: [] };
      const parts: WireContentPart[] = [{ type: "text", text: `Images returned by tool ${message.toolName} (call ${message.toolCallId}):` }];
      for (const image of images) parts.push({ type: "image_url", image_url: { url: imageDataUrl(image) } });
      return { wire, images: parts };
    }
    default:
      return null;
  }
}

function toWireAssistant(message: AssistantMessage): WireMessage {
  const wire: WireMessage =
    message.toolCalls.length === 0
      ? { role: "assistant", content: message.content }
      : {
          role: "assistant",
          content: message.content === "" ? null : message.content,
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: "function",
            function: { name: call.name, arguments: wireArguments(call.arguments) },
          })),
        };
  // Only the known reasoning fields: a message loaded from a session file could hold anything.
  const reasoning = message.reasoning;
  if (reasoning) for (const field of REASONING_FIELDS) if (reasoning[field] !== undefined) (wire as Record<string, unknown>)[field] = reasoning[field];
  return wire;
}

/** A call's arguments as sent back: text every server can parse as a JSON object (see module rules). */
export function wireArguments(raw: string): string {
  try {
    if (isPlainObject(JSON.parse(raw))) return raw;
  } catch {
    // not JSON: read as the loop reads it below
  }
  const parsed = parseToolArguments(raw);
  return parsed.ok ? JSON.stringify(parsed.value) : "{}";
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

/** The text of a tool result: its text parts joined by newlines (../tools/content.ts, images left out). */
export function contentText(parts: ContentPart[]): string {
  return textOfContent(parts, "omit");
}

// ---- responses (see wire-response.ts) ----

