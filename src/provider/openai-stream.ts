/**
 * Reading a streamed Chat Completions response: server-sent events in, one assistant turn out.
 * Rules:
 * - Only choice 0 is read. Text deltas are appended and reported one by one.
 * - Tool calls are assembled by `index`: `id` and `name` are taken from the first chunk that has
 *   them (servers that repeat them are fine), `arguments` pieces are concatenated in order.
 *   A delta without an `index` continues the last call. Either way a delta naming a function
 *   with a new id, or naming one (without ids) after the call's arguments formed a whole JSON
 *   object, starts a new call (see `pushToolCallDelta`). `tool_calls` may be one object instead
 *   of a list (TGI).
 * - Reasoning fields are collected to be sent back with the turn (see `ReasoningCollector`).
 * - Usage is taken from whichever chunk carries it (`usage`, or Groq's `x_groq.usage`).
 * - The stream is complete once `data: [DONE]` arrived or a choice reported `finish_reason`;
 *   a complete stream in which no chunk carried choice 0 has no answer (`sawChoice` false).
 */
import type { AssistantMessage, FinishReason, ModelResponse, ReasoningFields, ToolCall } from "./types.js";
import { callsWithBlock } from "./text-tool-calls.js";
import type { Usage } from "../tools/types.js";
import { argumentsText, parseUsage, wireToolCallList, wireUsageOf } from "./wire-response.js";
import { zeroUsage } from "../tools/usage.js";
import { errorText, jsonErrorText } from "./server-errors.js";

/**
 * An incremental SSE reader: `push` decoded text as it arrives, `end` once the body ended; each
 * event's `data:` payload (its `data:` lines joined by newlines) goes to `onData` with the event's
 * `event:` name ("" when none), in order. Lines end at CRLF, LF or CR (a CR ending one piece and
 * an LF starting the next are one break). A non-standard `error:` field line (llama.cpp) becomes
 * an event named `error` of its own. Comments and other fields are ignored.
 * Linear in the input: each piece is scanned once, and an unfinished line is kept as a list of
 * pieces joined once when it ends, so one very long line costs no more than many short ones.
 */
export class SseParser {
  private pending: string[] = [];
  private skipLeadingLF = false;
  private data: string[] = [];
  private event = "";

  constructor(private readonly onData: (data: string, event: string) => void) {}

  push(text: string): void {
    let start = 0;
    if (this.skipLeadingLF) {
      this.skipLeadingLF = false;
      if (text.charCodeAt(0) === LF) start = 1;
    }
    for (;;) {
      LINE_BREAK.lastIndex = start;
      const found = LINE_BREAK.exec(text);
      if (!found) break;
      const at = found.index;
      const last = text.slice(start, at);
      const line = this.pending.length === 0 ? last : this.pending.join("") + last;
      this.pending = [];
      start = at + 1;
      if (text.charCodeAt(at) === CR) {
        if (start === text.length) this.skipLeadingLF = true;
        else if (text.charCodeAt(start) === LF) start++;
      }
      this.take(line);
    }
    if (start < text.length) this.pending.push(start === 0 ? text : text.slice(start));
  }

  /** The body ended: the last line and the last event count even without their terminators. */
  end(): void {
    if (this.pending.length > 0) {
      const line = this.pending.join("");
      this.pending = [];
      this.take(line);
    }
    this.skipLeadingLF = false;
    this.take("");
  }

  private take(line: string): void {
    if (line === "") {
      const event = this.event;
      this.event = "";
      if (this.data.length === 0) return;
      const data = this.data.length === 1 ? this.data[0] : this.data.join("\n");
      this.data = [];
      this.onData(data, event);
    } else if (line.startsWith("data:")) this.data.push(fieldValue(line, 5));
    else if (line.startsWith("event:")) this.event = fieldValue(line, 6).trim();
    else if (line.startsWith("error:")) this.onData(fieldValue(line, 6), "error");
  }
}

/** A field's value: after `name:` and one optional space. */
const fieldValue = (line: string, nameLength: number) => line.slice(line.charCodeAt(nameLength) === SPACE ? nameLength + 1 : nameLength);

const LINE_BREAK = /[\r\n]/g;
const CR = 13;
const LF = 10;
const SPACE = 32;

/** The `data:` payloads of an SSE body, in order (see `SseParser`). */
export async function* sseData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let ready: string[] = [];
  const parser = new SseParser((data) => ready.push(data));
  const drain = function* () {
    const events = ready;
    ready = [];
    yield* events;
  };
  for await (const bytes of body) {
    parser.push(decoder.decode(bytes, { stream: true }));
    yield* drain();
  }
  parser.push(decoder.decode());
  parser.end();
  yield* drain();
}

/** An error the server sent inside the stream (`data: {"error": …}`, `event: error`, llama.cpp's `error:` line). */
export class StreamServerError extends Error {
  constructor(readonly serverMessage: string) {
    super(serverMessage);
    this.name = "StreamServerError";
  }
}

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
  /** A delta that may start the next call on this index, once argument text follows it (see `pushToolCallDelta`). */
  next?: { id: string; name: string };
}

type Loose = Record<string, unknown>;

/** Accumulates chunks of one streamed turn. */
export class StreamAssembler {
  private text = "";
  private readonly calls: PartialCall[] = [];
  private readonly byIndex = new Map<number, PartialCall>();
  private usage: Usage | null = null;
  private toolCallBlock: unknown = undefined;
  private readonly reasoning = new ReasoningCollector();
  finishReason: string | null = null;
  sawDone = false;
  /** False until a chunk carried choice 0 (a stream of usage-only chunks has no answer at all). */
  sawChoice = false;
  /** Characters of text already reported through `onTextDelta`. */
  emittedChars = 0;

  constructor(private readonly onTextDelta?: (delta: string) => void) {}

  get complete(): boolean {
    return this.sawDone || this.finishReason !== null;
  }

  /**
   * Feed one SSE event's data (and its `event:` name). Throws StreamServerError for an error
   * (an `error` event, or a payload with an `error` key or `object: "error"`), SyntaxError for bad JSON.
   */
  pushData(data: string, event = ""): void {
    if (event === "error") throw new StreamServerError(errorPayloadText(data));
    if (data.trim() === "[DONE]") {
      this.sawDone = true;
      return;
    }
    const chunk = JSON.parse(data) as Loose;
    if (chunk && typeof chunk === "object") {
      if (chunk.error) throw new StreamServerError(errorText(chunk.error));
      if (chunk.object === "error") throw new StreamServerError(errorText(chunk));
    }
    this.pushChunk(chunk);
  }

  pushChunk(chunk: Loose): void {
    const usage = wireUsageOf(chunk);
    if (usage) this.usage = parseUsage(usage);
    const choices = Array.isArray(chunk.choices) ? (chunk.choices as Loose[]) : [];
    const choice = choices.find((c) => (c?.index ?? 0) === 0);
    if (!choice) return;
    this.sawChoice = true;
    const delta = (choice.delta ?? {}) as Loose;
    if (typeof delta.content === "string" && delta.content !== "") {
      this.text += delta.content;
      this.emittedChars += delta.content.length;
      this.onTextDelta?.(delta.content);
    }
    this.reasoning.push(delta);
    for (const item of wireToolCallList(delta.tool_calls)) this.pushToolCallDelta((item ?? {}) as Loose);
    if (delta.tool_call !== undefined && delta.tool_call !== null) this.toolCallBlock = delta.tool_call;
    if (typeof choice.finish_reason === "string" && choice.finish_reason !== "") this.finishReason = choice.finish_reason;
  }

  /**
   * One tool-call delta. It continues the call at its `index` (or, without an index, the last
   * call), unless it starts another call there (SGLang, lmdeploy and Gemini put parallel calls on
   * one index):
   * - a delta naming a function that brings an id other than the call's (both known);
   * - a delta naming a function, with no id or the id the call lacks, for a call that already has
   *   a name and arguments that are a whole JSON object (Gemini: no ids at all). When such a delta
   *   brings no argument text, the new call starts with the next argument piece; when none comes,
   *   the delta was a repeat of the call (its id, if any, is taken).
   * A new id with no name (OCI sends one per chunk) continues the call, and so does a name with
   * the call's own id, or a name while the arguments are still incomplete.
   */
  private pushToolCallDelta(item: Loose): void {
    const fn = (item.function ?? {}) as Loose;
    const id = typeof item.id === "string" ? item.id : "";
    const name = typeof fn.name === "string" ? fn.name : "";
    const pieceText = fn.arguments === undefined ? "" : argumentsText(fn.arguments);
    const index = typeof item.index === "number" ? item.index : undefined;
    let call = index === undefined ? this.calls[this.calls.length - 1] : this.byIndex.get(index);
    let start: { id: string; name: string } | undefined;
    if (call && startsAnotherCall(call, id, name)) start = { id, name };
    else if (call && name !== "" && call.name !== "" && (id === "" || call.id === "") && isWholeObject(call.arguments)) {
      if (pieceText.trim() === "") {
        call.next = { id, name };
        return;
      }
      start = { id, name };
    } else if (call?.next && pieceText.trim() !== "") start = call.next;
    if (!call || start) {
      if (call) call.next = undefined;
      call = { id: start?.id ?? "", name: start?.name ?? "", arguments: "" };
      if (index !== undefined) this.byIndex.set(index, call);
      this.calls.push(call);
    }
    if (call.id === "" && id !== "") call.id = id;
    if (call.name === "" && name !== "") call.name = name;
    call.arguments += pieceText;
  }

  result(): ModelResponse {
    const toolCalls: ToolCall[] = this.calls
      .filter((call) => call.name !== "")
      .map((call) => ({ id: call.id || call.next?.id || "", name: call.name, arguments: call.arguments }));
    const message: AssistantMessage = { role: "assistant", content: this.text, toolCalls: callsWithBlock(toolCalls, this.toolCallBlock) };
    if (this.toolCallBlock !== undefined) message.toolCallBlock = this.toolCallBlock;
    const reasoning = this.reasoning.result();
    if (reasoning) message.reasoning = reasoning;
    const finishReason: FinishReason = this.finishReason ?? "unknown";
    return { message, usage: this.usage ?? zeroUsage(), finishReason };
  }
}

/** A delta naming a function, with an id other than the call's own (both known), is another call. */
function startsAnotherCall(call: PartialCall, id: string, name: string): boolean {
  return name !== "" && call.name !== "" && id !== "" && call.id !== "" && id !== call.id;
}

/**
 * Whether `text` is one whole JSON object (cheap test first: only a text ending in `}` is parsed,
 * so a call streamed in many pieces is not parsed once per piece).
 */
function isWholeObject(text: string): boolean {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{") || !trimmed.endsWith("}")) return false;
  try {
    JSON.parse(trimmed);
    return true;
  } catch {
    return false;
  }
}

/**
 * Streamed reasoning fields: `reasoning_content` and `reasoning` text pieces are joined;
 * `reasoning_details` items are listed, a piece with the same `index` and `type` as the item
 * before it being merged into it (its `text`/`summary` appended, other fields taken when set).
 */
class ReasoningCollector {
  private readonly texts: Partial<Record<"reasoning_content" | "reasoning", string>> = {};
  private readonly details: Loose[] = [];

  push(delta: Loose): void {
    for (const field of ["reasoning_content", "reasoning"] as const) {
      const piece = delta[field];
      if (typeof piece === "string" && piece !== "") this.texts[field] = (this.texts[field] ?? "") + piece;
    }
    if (!Array.isArray(delta.reasoning_details)) return;
    for (const raw of delta.reasoning_details) {
      if (raw === null || typeof raw !== "object" || Array.isArray(raw)) continue;
      const item = raw as Loose;
      const last = this.details[this.details.length - 1];
      if (last && typeof item.index === "number" && item.index === last.index && item.type === last.type) mergeDetail(last, item);
      else this.details.push({ ...item });
    }
  }

  result(): ReasoningFields | undefined {
    const found: ReasoningFields = { ...this.texts };
    if (this.details.length > 0) found.reasoning_details = this.details;
    return Object.keys(found).length > 0 ? found : undefined;
  }
}

function mergeDetail(into: Loose, piece: Loose): void {
  for (const [key, value] of Object.entries(piece)) {
    if (value === undefined || value === null || key === "__proto__") continue;
    if ((key === "text" || key === "summary") && typeof value === "string" && typeof into[key] === "string") into[key] = (into[key] as string) + value;
    else into[key] = value;
  }
}

/** The text of an error event's data: the message of a JSON error body (any shape server-errors.ts reads), else the data itself. */
function errorPayloadText(data: string): string {
  try {
    return jsonErrorText(JSON.parse(data));
  } catch {
    return data.trim() || "(no error message)";
  }
}
