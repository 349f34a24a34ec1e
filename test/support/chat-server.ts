/**
 * A scripted Chat Completions server for tests: `POST /v1/chat/completions` on 127.0.0.1 (port 0).
 *
 *   const server = await startChatServer([
 *     reply.stream({ content: "Hel lo", toolCalls: [{ name: "getWeather", arguments: '{"city":"Oslo"}' }] }),
 *     reply.error(429, "slow down", { "retry-after-ms": "10" }),
 *     reply.json({ content: "It is sunny." }),
 *   ]);
 *   // point the client at server.url (".../v1"), then:
 *   server.requests;        // parsed request bodies, in order
 *   server.assertClean();   // throws if any request/response broke the official schema, or the script ran out
 *   await server.close();
 *
 * The script is a list of replies (one per request, in order) or a function of the request.
 * A server profile (`startChatServer(script, { profile })`, see server-profiles.ts) adds the
 * request rules of one real server: a request that breaks one is answered with that server's
 * refusal instead of the script (which does not advance), and is listed in `refusals`.
 * Every request body, every JSON completion and every stream chunk is validated against
 * test/fixtures/openai/chat-completions.schema.json (the official wire format); failures are kept in
 * `validationErrors`. Error bodies, raw string chunks and replies marked `validate: false` are not
 * checked. Other trouble (unknown route, script exhausted) goes to `problems`.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS; under NodeNext its default import types as the module namespace.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

// ---- replies ----

export type ChatReply =
  | { kind: "json"; body: unknown; status?: number; headers?: Record<string, string>; validate?: boolean }
  | {
      kind: "sse";
      /** Objects are sent as JSON (and validated); strings are sent verbatim after `data: `. */
      chunks: Array<object | string | RawSse>;
      /** Send `data: [DONE]` at the end (default true; ignored when cut). */
      done?: boolean;
      /** Stop after `cut.after` chunks: `destroy` the socket, or `end` the response cleanly but early. */
      cut?: { after: number; mode: "destroy" | "end" };
      chunkDelayMs?: number;
      validate?: boolean;
    }
  | { kind: "error"; status: number; body?: unknown; headers?: Record<string, string> }
  /** A body sent verbatim with its content type (plain text, HTML, a JSON array …); never validated. */
  | { kind: "raw"; status: number; body: string; contentType: string; headers?: Record<string, string> }
  | { kind: "hang" };

/** An SSE chunk written verbatim (whole lines, e.g. `event: error\ndata: …\n\n`), not after `data: `. */
export class RawSse {
  constructor(readonly text: string) {}
}

/** What a profile rule sees: the request body, and every reply the server sent before it. */
export interface ProfileContext {
  /** Replies sent so far (script steps and refusals), in order. */
  sent: ChatReply[];
}

/** The request rules of one real server. `check` returns the refusal for a request that breaks one. */
export interface ServerProfile {
  name: string;
  check(body: any, context: ProfileContext): ProfileRefusal | null;
}

export interface ProfileRefusal {
  /** What was broken, for `refusals`. */
  rule: string;
  reply: ChatReply;
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (undefined when it was not JSON). */
  body: any;
}

export type ChatScript = ChatReply[] | ((request: ReceivedRequest, index: number) => ChatReply | Promise<ChatReply>);

export interface ToolCallSpec {
  id?: string;
  name: string;
  /** A string is streamed in pieces of `argumentPieceSize` characters; an array gives the pieces. */
  arguments: string | string[];
}

export interface TurnSpec {
  /** A string (streamed in pieces of `textPieceSize` characters) or the exact pieces. */
  content?: string | string[];
  toolCalls?: ToolCallSpec[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens?: number };
  /** Default `tool_calls` when there are calls, else `stop`; `null` sends no finish reason at all. */
  finishReason?: string | null;
  /** Extra fields merged into the JSON message (e.g. a non-standard `tool_call`). */
  extraMessage?: Record<string, unknown>;
  model?: string;
}

export interface StreamSpec extends TurnSpec {
  textPieceSize?: number;
  argumentPieceSize?: number;
  /** Alternate argument pieces of several tool calls instead of sending them one after another. */
  interleaveToolCalls?: boolean;
  /** Deltas sent right after the role chunk, before any text (e.g. `{reasoning_content: "…"}` pieces). */
  leadingDeltas?: Record<string, unknown>[];
}

/** One `chat.completion.chunk` for choice 0 (for streams built by hand). */
export function streamChunk(delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: "chatcmpl-hand",
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: DEFAULT_MODEL,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    ...extra,
  };
}

const DEFAULT_MODEL = "test-model";

/** Split `text` into pieces of `size` characters. */
export function splitText(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

const finishOf = (spec: TurnSpec) =>
  spec.finishReason === undefined ? (spec.toolCalls?.length ? "tool_calls" : "stop") : spec.finishReason;

const usageOf = (usage: NonNullable<TurnSpec["usage"]>) => ({
  ...usage,
  total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens,
});

let idCounter = 0;

/** A complete `chat.completion` body. */
export function completionBody(spec: TurnSpec): Record<string, unknown> {
  const content = Array.isArray(spec.content) ? spec.content.join("") : spec.content;
  const message: Record<string, unknown> = { role: "assistant", content: content ?? null, refusal: null };
  if (spec.toolCalls?.length) {
    message.tool_calls = spec.toolCalls.map((call, i) => ({
      id: call.id ?? `call_${i + 1}`,
      type: "function",
      function: { name: call.name, arguments: Array.isArray(call.arguments) ? call.arguments.join("") : call.arguments },
    }));
  }
  Object.assign(message, spec.extraMessage);
  const body: Record<string, unknown> = {
    id: `chatcmpl-${++idCounter}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: spec.model ?? DEFAULT_MODEL,
    choices: [{ index: 0, message, finish_reason: finishOf(spec) ?? "stop", logprobs: null }],
  };
  if (spec.usage) body.usage = usageOf(spec.usage);
  return body;
}

/** The `chat.completion.chunk` objects of a streamed turn: role, text pieces, tool-call deltas, finish, usage. */
export function streamChunks(spec: StreamSpec): Record<string, unknown>[] {
  const id = `chatcmpl-${++idCounter}`;
  const created = Math.floor(Date.now() / 1000);
  const model = spec.model ?? DEFAULT_MODEL;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  const chunks: Record<string, unknown>[] = [chunk({ role: "assistant", content: "" })];
  for (const delta of spec.leadingDeltas ?? []) chunks.push(chunk(delta));
  const text = spec.content === undefined ? [] : Array.isArray(spec.content) ? spec.content : splitText(spec.content, spec.textPieceSize ?? 3);
  for (const piece of text) chunks.push(chunk({ content: piece }));
  const perCall = (spec.toolCalls ?? []).map((call, index) => {
    const pieces = Array.isArray(call.arguments) ? call.arguments : splitText(call.arguments, spec.argumentPieceSize ?? 4);
    return [
      chunk({ tool_calls: [{ index, id: call.id ?? `call_${index + 1}`, type: "function", function: { name: call.name, arguments: "" } }] }),
      ...pieces.map((piece) => chunk({ tool_calls: [{ index, function: { arguments: piece } }] })),
    ];
  });
  if (spec.interleaveToolCalls) {
    for (let step = 0; perCall.some((list) => step < list.length); step++) {
      for (const list of perCall) if (step < list.length) chunks.push(list[step]);
    }
  } else {
    for (const list of perCall) chunks.push(...list);
  }
  const finish = finishOf(spec);
  if (finish !== null) chunks.push(chunk({}, finish));
  if (spec.usage) chunks.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage: usageOf(spec.usage) });
  return chunks;
}

/** Builders for script steps. */
export const reply = {
  json: (spec: TurnSpec = {}): ChatReply => ({ kind: "json", body: completionBody(spec) }),
  stream: (spec: StreamSpec = {}, extra: Partial<Extract<ChatReply, { kind: "sse" }>> = {}): ChatReply => ({
    kind: "sse",
    chunks: streamChunks(spec),
    ...extra,
  }),
  /** A stream that stops after `after` chunks of `spec` (no finish reason, no [DONE]). */
  cut: (spec: StreamSpec, after: number, mode: "destroy" | "end" = "destroy"): ChatReply => ({
    kind: "sse",
    chunks: streamChunks(spec),
    cut: { after, mode },
  }),
  /** An OpenAI-style error body `{error: {message, type, code}}`. */
  error: (status: number, message = `error ${status}`, headers: Record<string, string> = {}): ChatReply => ({
    kind: "error",
    status,
    body: { error: { message, type: status === 429 ? "rate_limit_exceeded" : "invalid_request_error", code: null } },
    headers,
  }),
  hang: (): ChatReply => ({ kind: "hang" }),
  /** A body sent verbatim (status, text, content type). */
  raw: (status: number, body: string, contentType = "text/plain"): ChatReply => ({ kind: "raw", status, body, contentType }),
};

// ---- schema ----

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const CHAT_SCHEMA_PATH = path.resolve(repoRoot, "test", "fixtures", "openai", "chat-completions.schema.json");

interface Validators {
  request: ValidateFunction;
  response: ValidateFunction;
  chunk: ValidateFunction;
}
let validators: Validators | undefined;

function getValidators(): Validators {
  if (validators) return validators;
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema(JSON.parse(readFileSync(CHAT_SCHEMA_PATH, "utf8")), "chat");
  const get = (name: string) => {
    const validate = ajv.getSchema(`chat#/$defs/${name}`);
    if (!validate) throw new Error(`${CHAT_SCHEMA_PATH} has no $defs/${name}`);
    return validate;
  };
  validators = {
    request: get("CreateChatCompletionRequest"),
    response: get("CreateChatCompletionResponse"),
    chunk: get("CreateChatCompletionStreamResponse"),
  };
  return validators;
}

/** Schema errors of `value` as one line each, prefixed with `where`; [] when valid. */
export function schemaErrors(kind: keyof Validators, value: unknown, where: string): string[] {
  const validate = getValidators()[kind];
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${where}: ${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);
}

// ---- server ----

export interface ChatServer {
  /** Base URL including `/v1`, for the client's `baseURL`. */
  url: string;
  /** Parsed request bodies, in order. */
  requests: any[];
  /** Everything received, with headers. */
  received: ReceivedRequest[];
  /** Official-schema failures of requests, completions and chunks. */
  validationErrors: string[];
  /** Unknown routes, bad JSON requests, script exhausted, handler crashes. */
  problems: string[];
  /** Requests the profile refused, as `request N: rule`. */
  refusals: string[];
  /** Throws when `validationErrors` or `problems` is not empty, or `refusals` is (pass `{ refusals: n }` to expect n). */
  assertClean(expect?: { refusals?: number }): void;
  close(): Promise<void>;
}

export async function startChatServer(script: ChatScript, options: { profile?: ServerProfile } = {}): Promise<ChatServer> {
  getValidators();
  const received: ReceivedRequest[] = [];
  const validationErrors: string[] = [];
  const problems: string[] = [];
  const refusals: string[] = [];
  const sent: ChatReply[] = [];
  let answered = 0;
  const sockets = new Set<Socket>();

  const nextReply = async (request: ReceivedRequest, index: number): Promise<ChatReply | undefined> =>
    typeof script === "function" ? script(request, index) : script[index];

  const server = createServer(async (req, res) => {
    const raw = await readBody(req);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const request: ReceivedRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body };
    if (request.method !== "POST" || request.path.split("?")[0] !== "/v1/chat/completions") {
      problems.push(`unexpected ${request.method} ${request.path}`);
      return sendJson(res, 404, { error: { message: `no route ${request.method} ${request.path}` } });
    }
    const index = received.length;
    received.push(request);
    if (body === undefined) problems.push(`request ${index + 1}: body is not JSON`);
    else validationErrors.push(...schemaErrors("request", body, `request ${index + 1}`));
    try {
      const refusal = options.profile && body !== undefined ? options.profile.check(body, { sent: [...sent] }) : null;
      if (refusal) {
        refusals.push(`request ${index + 1}: ${refusal.rule}`);
        sent.push(refusal.reply);
        return await send(res, refusal.reply, `refusal ${index + 1}`, validationErrors);
      }
      const step = await nextReply(request, answered++);
      if (step) sent.push(step);
      if (!step) {
        problems.push(`request ${index + 1}: the script has no reply for it`);
        return sendJson(res, 400, { error: { message: `chat-server script exhausted at request ${index + 1}` } });
      }
      await send(res, step, `reply ${index + 1}`, validationErrors);
    } catch (error) {
      problems.push(`request ${index + 1}: ${(error as Error).stack ?? String(error)}`);
      if (!res.headersSent) sendJson(res, 500, { error: { message: "chat-server handler crashed" } });
      else res.destroy();
    }
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return received.map((r) => r.body);
    },
    received,
    validationErrors,
    problems,
    refusals,
    assertClean(expect = {}) {
      const all = [...validationErrors, ...problems];
      if (refusals.length !== (expect.refusals ?? 0)) all.push(`expected ${expect.refusals ?? 0} refusals, got:`, ...refusals);
      if (all.length > 0) throw new Error(`chat-server saw problems:\n${all.join("\n")}`);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function send(res: ServerResponse, step: ChatReply, where: string, errors: string[]): Promise<void> {
  switch (step.kind) {
    case "hang":
      return; // never answer; close() destroys the socket
    case "error":
      return sendJson(res, step.status, step.body ?? { error: { message: `error ${step.status}` } }, step.headers);
    case "raw":
      res.writeHead(step.status, { "content-type": step.contentType, ...step.headers });
      res.end(step.body);
      return;
    case "json":
      if (step.validate !== false) errors.push(...schemaErrors("response", step.body, where));
      return sendJson(res, step.status ?? 200, step.body, step.headers);
    case "sse": {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
      const count = step.cut ? Math.min(step.cut.after, step.chunks.length) : step.chunks.length;
      for (let i = 0; i < count; i++) {
        const chunk = step.chunks[i];
        if (chunk instanceof RawSse) {
          await write(res, chunk.text);
          continue;
        }
        if (typeof chunk !== "string" && step.validate !== false) errors.push(...schemaErrors("chunk", chunk, `${where} chunk ${i + 1}`));
        await write(res, `data: ${typeof chunk === "string" ? chunk : JSON.stringify(chunk)}\n\n`);
        if (step.chunkDelayMs) await new Promise((r) => setTimeout(r, step.chunkDelayMs));
      }
      if (step.cut?.mode === "destroy") {
        await new Promise((r) => setTimeout(r, 30)); // let the client read what was sent
        res.socket?.destroy();
        return;
      }
      if (!step.cut && step.done !== false) await write(res, "data: [DONE]\n\n");
      res.end();
      return;
    }
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function write(res: ServerResponse, text: string): Promise<void> {
  return new Promise((resolve, reject) => res.write(text, (error) => (error ? reject(error) : resolve())));
}

function readBody(req: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (piece: string) => (text += piece));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}
