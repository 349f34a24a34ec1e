/**
 * Reading a streamed Chat Completions response: server-sent events in, one assistant turn out.
 * Rules:
 * - Only choice 0 is read. Text deltas are appended and reported one by one.
 * - Tool calls are assembled by `index`: `id` and `name` are taken from the first chunk that has
 *   them (servers that repeat them are fine), `arguments` pieces are concatenated in order.
 *   A delta without an `index` continues the last call, or starts a new one when it has a new id.
 * - Usage is taken from whichever chunk carries it (the final one with `include_usage`).
 * - The stream is complete once `data: [DONE]` arrived or a choice reported `finish_reason`;
 *   a complete stream in which no chunk carried choice 0 has no answer (`sawChoice` false).
 */
import type { AssistantMessage, FinishReason, ModelResponse, ToolCall } from "./types.js";
import type { Usage } from "../tools/types.js";
import { argumentsText, fallbackCallId, parseUsage, zeroUsage } from "./wire.js";

/**
 * An incremental SSE reader: `push` decoded text as it arrives, `end` once the body ended; each
 * event's `data:` payload (its `data:` lines joined by newlines) goes to `onData`, in order.
 * Lines end at CRLF, LF or CR (a CR at the very end of the text waits for the next piece, which
 * may start with its LF); comments, `event:` and `id:` lines are ignored.
 */
export class SseParser {
  private buffer = "";
  private data: string[] = [];

  constructor(private readonly onData: (data: string) => void) {}

  push(text: string): void {
    const buffered = this.buffer + text;
    const lines = buffered.split(LINE_BREAK);
    this.buffer = lines.pop() ?? "";
    for (let i = 0; i < lines.length; i++) this.take(lines[i]);
  }

  /** The body ended: the last line and the last event count even without their terminators. */
  end(): void {
    this.push("\n");
    this.take("");
  }

  private take(line: string): void {
    if (line === "") {
      if (this.data.length === 0) return;
      const event = this.data.length === 1 ? this.data[0] : this.data.join("\n");
      this.data = [];
      this.onData(event);
    } else if (line.startsWith("data:")) this.data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
  }
}

const LINE_BREAK = /\r\n|\r(?!$)|\n/;

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

/** An error object the server sent inside the stream (`data: {"error": …}`). */
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
}

type Loose = Record<string, unknown>;

/** Accumulates chunks of one streamed turn. */
export class StreamAssembler {
  private text = "";
  private readonly calls: PartialCall[] = [];
  private readonly byIndex = new Map<number, PartialCall>();
  private usage: Usage | null = null;
  private toolCallBlock: unknown = undefined;
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

  /** Feed one SSE data payload. Throws StreamServerError for an error payload, SyntaxError for bad JSON. */
  pushData(data: string): void {
    if (data.trim() === "[DONE]") {
      this.sawDone = true;
      return;
    }
    const chunk = JSON.parse(data) as Loose;
    if (chunk && typeof chunk === "object" && chunk.error) throw new StreamServerError(errorText(chunk.error));
    this.pushChunk(chunk);
  }

  pushChunk(chunk: Loose): void {
    if (chunk.usage) this.usage = parseUsage(chunk.usage);
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
    if (Array.isArray(delta.tool_calls)) for (const item of delta.tool_calls) this.pushToolCallDelta((item ?? {}) as Loose);
    if (delta.tool_call !== undefined && delta.tool_call !== null) this.toolCallBlock = delta.tool_call;
    if (typeof choice.finish_reason === "string" && choice.finish_reason !== "") this.finishReason = choice.finish_reason;
  }

  private pushToolCallDelta(item: Loose): void {
    const fn = (item.function ?? {}) as Loose;
    const id = typeof item.id === "string" ? item.id : "";
    let call: PartialCall | undefined;
    if (typeof item.index === "number") {
      call = this.byIndex.get(item.index);
      if (!call) {
        call = { id: "", name: "", arguments: "" };
        this.byIndex.set(item.index, call);
        this.calls.push(call);
      }
    } else {
      call = this.calls[this.calls.length - 1];
      if (!call || (id !== "" && call.id !== "" && id !== call.id)) {
        call = { id: "", name: "", arguments: "" };
        this.calls.push(call);
      }
    }
    if (call.id === "" && id !== "") call.id = id;
    if (call.name === "" && typeof fn.name === "string") call.name = fn.name;
    if (fn.arguments !== undefined) call.arguments += argumentsText(fn.arguments);
  }

  result(): ModelResponse {
    const toolCalls: ToolCall[] = this.calls
      .filter((call) => call.name !== "")
      .map((call, index) => ({ id: call.id || fallbackCallId(index), name: call.name, arguments: call.arguments }));
    const message: AssistantMessage = { role: "assistant", content: this.text, toolCalls };
    if (this.toolCallBlock !== undefined) message.toolCallBlock = this.toolCallBlock;
    const finishReason: FinishReason = this.finishReason ?? "unknown";
    return { message, usage: this.usage ?? zeroUsage(), finishReason };
  }
}

/** The message of a server error object (`{message}` or anything else, serialised). */
export function errorText(error: unknown): string {
  if (typeof error === "string") return error;
  if (error && typeof error === "object" && typeof (error as Loose).message === "string") return (error as Loose).message as string;
  return JSON.stringify(error);
}
