/**
 * The Chat Completions provider, over the `openai` package (loaded on the first request).
 * Rules:
 * - Streams by default (`stream_options.include_usage`); text deltas are reported as they arrive
 *   (without streaming, the whole text is reported once).
 * - The SDK runs with `maxRetries: 0`; this file retries, so every retry is reported via `onRetry`.
 *   Retried: 408, 409, 429, 5xx, connection errors, timeouts, and a stream cut before its end,
 *   as long as no text of this request was reported yet. Never retried: other 4xx (400, 401 …).
 *   Delay: `retry-after-ms` / `retry-after` (capped at 30 s), else exponential backoff with jitter.
 * - `timeoutMs` is an inactivity limit: no response headers, or no stream data, for that long.
 * - The request's abort signal cancels the request, the stream and any retry wait.
 * - `streamUsage` "auto" (default) asks for usage in streams (`stream_options`); when the server
 *   refuses that (400/422 whose body names stream_options, e.g. Mistral), the request is sent once
 *   more without it, at once and not counted as a retry, and the provider stops sending it.
 * - Reasoning the server sends is marked with this model and base URL, and reasoning goes back
 *   only to the same model and base URL (see reasoning.ts). A server that sent reasoning but
 *   refuses it back (400/422 saying a `reasoning…` field is unsupported, e.g. older vLLM) gets
 *   the request once more without any, like `stream_options`, and no reasoning for the rest of the run.
 * - Failures end in `ModelError(message, status)`; the message names the status and the server's
 *   own error text, whatever the body's shape (see server-errors.ts), and never contains the API
 *   key. A 200 answer that holds an error (`{error}` JSON, an error in the stream) is a failure too.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type OpenAI from "openai";
import type { ModelRequest, ModelResponse, Provider, RetryInfo } from "./types.js";
import { ModelError } from "./types.js";
import { buildRequestBody, serializeRequestBytes, type BodySettings, type MaxTokensField } from "./wire.js";
import { parseUsage, parseWireMessage, wireUsageOf } from "./wire-response.js";
import { SseParser, StreamAssembler, StreamServerError } from "./openai-stream.js";
import { isRetryableStatus, retryDelayMs } from "./retry.js";
import { describeErrorBody, describeNonJson, errorBodyOf, errorText, jsonOrText, keepingErrorBodies, namesStreamOptions, refusesField, withHint } from "./server-errors.js";
import { carriesReasoning, markReasoning, reasoningFor, reasoningOrigin } from "./reasoning.js";

export { isRetryableStatus, retryDelayMs } from "./retry.js";

/** Whether streamed requests ask for usage: "auto" asks and stops asking when the server refuses. */
export type StreamUsage = "auto" | boolean;

export interface OpenAIProviderOptions {
  model: string;
  /** Default: `OPENAI_BASE_URL`, else OpenAI's API. */
  baseURL?: string;
  /** Default: `OPENAI_API_KEY`; a placeholder is sent when neither is set (local servers). */
  apiKey?: string;
  temperature?: number;
  maxTokens?: number;
  /** The request field for `maxTokens` (default `max_tokens`). */
  maxTokensField?: MaxTokensField;
  /** Default true. */
  stream?: boolean;
  /** Default "auto" (see the module rules). */
  streamUsage?: StreamUsage;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** Inactivity limit per attempt, ms (default 600000). */
  timeoutMs?: number;
  fetch?: typeof globalThis.fetch;
}

const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_TIMEOUT_MS = 600_000;
const NO_KEY_PLACEHOLDER = "no-api-key";
/** setTimeout's limit is 2^31 - 1 ms. */
const MAX_TIMER_MS = 2_000_000_000;

/**
 * The SDK sends bytes given as `options.body` as they are; its first argument then only tells it
 * whether the request streams. So the body is serialised by yiem (see `serializeRequestBytes`:
 * each message once per run, not once per request). Its content-type is one of the client's
 * default headers (the client sends nothing else), which spares the SDK merging per-request
 * headers into a `Headers` object of their own for every request.
 */
const JSON_HEADERS = { "content-type": "application/json" };

/** A failed attempt, before deciding whether to retry. */
class AttemptError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryable: boolean,
    readonly headers?: Headers,
    /** The raw error body, when the server sent one. */
    readonly body?: string,
  ) {
    super(message);
  }
}

export function createOpenAIProvider(opts: OpenAIProviderOptions): Provider {
  const stream = opts.stream ?? true;
  const maxRetries = Math.max(0, Math.floor(opts.maxRetries ?? DEFAULT_MAX_RETRIES));
  const timeoutMs = opts.timeoutMs && opts.timeoutMs > 0 ? Math.min(Math.ceil(opts.timeoutMs), MAX_TIMER_MS) : DEFAULT_TIMEOUT_MS;
  const apiKey = opts.apiKey || process.env.OPENAI_API_KEY || undefined;
  const streamUsage = opts.streamUsage ?? "auto";
  const settings: BodySettings = {
    model: opts.model,
    temperature: opts.temperature,
    maxTokens: opts.maxTokens,
    maxTokensField: opts.maxTokensField,
    stream,
    streamUsage: streamUsage !== false,
  };
  const redact = (text: string) => (apiKey && apiKey.length >= 4 ? text.split(apiKey).join("***") : text);
  // The base URL the SDK will use: the option, else OPENAI_BASE_URL, else OpenAI's API.
  const origin = reasoningOrigin(opts.model, opts.baseURL || process.env.OPENAI_BASE_URL || "https://api.openai.com/v1");

  let client: Promise<OpenAI> | undefined;
  const getClient = () =>
    (client ??= import("openai").then(
      ({ default: OpenAIClient }) =>
        new OpenAIClient({
          apiKey: apiKey ?? NO_KEY_PLACEHOLDER,
          baseURL: opts.baseURL || undefined,
          maxRetries: 0,
          timeout: timeoutMs + 1_000,
          defaultHeaders: JSON_HEADERS,
          fetch: keepingErrorBodies(opts.fetch),
        }),
    ));

  /** False once the server refused reasoning fields it sent (see the module rules). */
  let sendReasoning = true;
  async function complete(request: ModelRequest): Promise<ModelResponse> {
    let messages = reasoningFor(request.messages, sendReasoning ? origin : "");
    let body: RequestBody = { json: serializeRequestBytes(settings, messages, request.tools), stream };
    const sdk = await getClient();
    /** `model at baseURL` for error messages. */
    /** Attempts that do not count against maxRetries (the one resend without stream_options or reasoning). */
    let uncounted = 0;
    for (let attempt = 0; ; attempt++) {
      if (request.signal.aborted) throw abortedError(origin);
      const emitted = { chars: 0 };
      try {
        return markReasoning(await runAttempt(sdk, body, request, timeoutMs, emitted), origin);
      } catch (error) {
        if (request.signal.aborted) throw abortedError(origin);
        const failure = toAttemptError(error, timeoutMs, emitted.chars, sdk);
        const message = redact(failure.message);
        // A refused optional field: send once more without it, at once and not counted as a retry.
        const refusal = failure.body ?? failure.message;
        let dropped: string | undefined;
        if (stream && streamUsage === "auto" && settings.streamUsage && namesStreamOptions(failure.status, refusal)) {
          settings.streamUsage = false;
          dropped = "stream_options";
        } else if (sendReasoning && carriesReasoning(messages) && refusesField(failure.status, refusal, "reasoning")) {
          sendReasoning = false;
          messages = reasoningFor(request.messages, "");
          dropped = "reasoning fields";
        }
        if (dropped !== undefined) {
          body = { json: serializeRequestBytes(settings, messages, request.tools), stream };
          uncounted++;
          request.onRetry?.({ attempt: attempt + 1, delayMs: 0, status: failure.status, message: `${message} (sending the request again without ${dropped})` });
          continue;
        }
        if (!failure.retryable || attempt - uncounted >= maxRetries) {
          const tries = attempt > 0 ? ` (after ${attempt + 1} attempts)` : "";
          const hint = failure.status === 401 && !apiKey ? " (no API key is set: set OPENAI_API_KEY, or name the variable in model.apiKeyEnv)" : "";
          throw new ModelError(`Model request to ${origin} failed: ${message}${tries}${hint}`, failure.status);
        }
        const info: RetryInfo = { attempt: attempt + 1, delayMs: retryDelayMs(attempt + 1, failure.headers), status: failure.status, message };
        request.onRetry?.(info);
        await sleep(info.delayMs, undefined, { signal: request.signal }).catch(() => {
          throw abortedError(origin);
        });
      }
    }
  }

  return {
    model: opts.model,
    complete,
    describeRequest: (request) => buildRequestBody(settings, reasoningFor(request.messages, origin), request.tools),
  };
}

/** A request body serialised once for all attempts (UTF-8 JSON), and whether it asks for a stream. */
interface RequestBody {
  json: Uint8Array;
  stream: boolean;
}

/** One HTTP request: its own abort controller (caller's signal + inactivity watchdog). */
async function runAttempt(
  sdk: OpenAI,
  body: RequestBody,
  request: ModelRequest,
  timeoutMs: number,
  emitted: { chars: number },
): Promise<ModelResponse> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(request.signal.reason);
  request.signal.addEventListener("abort", onAbort, { once: true });
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  // One timer per attempt, restarted on activity (refresh() instead of a new timer per chunk).
  const touch = () => {
    if (timer) timer.refresh();
    else timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error("timeout"));
    }, timeoutMs);
  };
  touch();
  const completions = sdk.chat.completions as unknown as {
    create(body: unknown, options: unknown): Promise<unknown> & { asResponse(): Promise<Response> };
  };
  const options = { signal: controller.signal, maxRetries: 0, body: body.json };
  const params = { stream: body.stream };
  try {
    const response = await completions.create(params, options).asResponse();
    touch();
    if (!body.stream) {
      const result = parseCompletion(await jsonOrText(response));
      if (result.message.content !== "") request.onTextDelta?.(result.message.content);
      return result;
    }
    if (!response.body) throw new AttemptError("the server sent no response body", null, true);
    const contentType = response.headers.get("content-type") ?? "";
    if (/text\/html/i.test(contentType)) {
      throw new AttemptError(`the server sent no event stream: ${withHint(describeNonJson(await response.text(), contentType))}`, null, false);
    }
    if (/application\/json/i.test(contentType)) {
      // Some servers ignore `stream: true` and answer with one completion.
      const result = parseCompletion(await jsonOrText(response));
      if (result.message.content !== "") request.onTextDelta?.(result.message.content);
      return result;
    }
    const assembler = new StreamAssembler((delta) => {
      emitted.chars += delta.length;
      request.onTextDelta?.(delta);
    });
    const seen: StreamSeen = { events: 0, head: "" };
    try {
      await readStream(response.body as unknown as ReadableStream<Uint8Array>, assembler, touch, seen);
    } catch (error) {
      if (error instanceof StreamServerError || error instanceof SyntaxError || timedOut || request.signal.aborted) throw error;
      if (!assembler.complete) {
        throw new AttemptError(`the response stream was cut before it was complete (${rootCauseText(error)})`, null, true);
      }
    }
    if (!assembler.complete && seen.events === 0 && seen.head.trim() !== "") {
      // A whole body without one SSE event was never a stream: show what it was.
      throw new AttemptError(`the server sent no event stream: ${withHint(describeNonJson(seen.head, contentType))}`, null, false);
    }
    if (!assembler.complete) throw new AttemptError("the response stream ended before it was complete", null, true);
    if (!assembler.sawChoice) throw new AttemptError("the response has no choices", null, false);
    return assembler.result();
  } catch (error) {
    if (timedOut) throw new AttemptError(`no response from the server for ${timeoutMs} ms`, null, true);
    throw error;
  } finally {
    clearTimeout(timer);
    request.signal.removeEventListener("abort", onAbort);
  }
}

/**
 * Feeds a streamed body to `assembler`, calling `onActivity` per piece received, until the body
 * ends or `data: [DONE]` arrived (events after it are ignored). Read with one reader, never
 * through an async iterator: that one releases its reader at the end, which costs an error
 * object with a cleaned stack per response. `seen` counts the events and keeps the body's start. After [DONE] the body is given until the next turn of
 * the event loop to end by itself (a server ends it right after [DONE]); one still open then is
 * cancelled, as is one whose reading failed.
 */
async function readStream(body: ReadableStream<Uint8Array>, assembler: StreamAssembler, onActivity: () => void, seen: StreamSeen): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser((data, event) => {
    seen.events++;
    if (!assembler.sawDone) assembler.pushData(data, event);
  });
  const push = (text: string) => {
    if (seen.head.length < STREAM_HEAD_CHARS) seen.head += text.slice(0, STREAM_HEAD_CHARS - seen.head.length);
    parser.push(text);
  };
  let ended = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        push(decoder.decode());
        parser.end();
        return;
      }
      onActivity();
      push(decoder.decode(value, { stream: true }));
      if (assembler.sawDone) {
        ended = await endsAtOnce(reader);
        return;
      }
    }
  } finally {
    if (!ended) reader.cancel().catch(() => {});
  }
}

/** What a stream reader saw: SSE events, and the first STREAM_HEAD_CHARS characters (to show a body that was no stream). */
interface StreamSeen {
  events: number;
  head: string;
}

const STREAM_HEAD_CHARS = 2_000;

/** Whether the stream ends (with no more data) before the event loop's next check phase. */
function endsAtOnce(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<boolean> {
  return new Promise((resolve) => {
    const immediate = setImmediate(() => resolve(false));
    reader.read().then(
      ({ done }) => {
        clearImmediate(immediate);
        resolve(done);
      },
      () => {
        clearImmediate(immediate);
        resolve(false);
      },
    );
  });
}

/**
 * A non-streamed answer. Not JSON (`jsonOrText` then hands over the text) or JSON holding an error
 * (`{error}`, `{object: "error"}`) is a failure with the server's text.
 */
function parseCompletion(answer: unknown): ModelResponse {
  if (typeof answer === "string") throw new AttemptError(`the server sent no JSON completion: ${withHint(describeNonJson(answer))}`, null, false);
  if (answer === null || typeof answer !== "object") throw new AttemptError("the response has no choices", null, false);
  const completion = answer as Record<string, unknown>;
  if ((completion.error !== undefined && completion.error !== null) || completion.object === "error") {
    const error = completion.error ?? completion;
    const code = (error as { code?: unknown }).code;
    const retryable = typeof code === "number" && isRetryableStatus(code);
    throw new AttemptError(`the server reported an error: ${errorText(error)}`, null, retryable);
  }
  const choices = Array.isArray(completion.choices) ? (completion.choices as Record<string, unknown>[]) : [];
  const choice = choices.find((c) => (c?.index ?? 0) === 0) ?? choices[0];
  if (!choice) throw new AttemptError("the response has no choices", null, false);
  const finish = choice.finish_reason;
  return {
    message: parseWireMessage(choice.message),
    usage: parseUsage(wireUsageOf(completion)),
    finishReason: typeof finish === "string" && finish !== "" ? finish : "unknown",
  };
}

/** Classify anything thrown by an attempt. `emittedChars > 0` makes every failure final. */
function toAttemptError(error: unknown, timeoutMs: number, emittedChars: number, sdk: OpenAI): AttemptError {
  const failure = classify(error, timeoutMs, sdk);
  if (emittedChars === 0 || !failure.retryable) return failure;
  return new AttemptError(`${failure.message} (after ${emittedChars} characters of text were already received)`, failure.status, false);
}

function classify(error: unknown, timeoutMs: number, sdk: OpenAI): AttemptError {
  if (error instanceof AttemptError) return error;
  if (error instanceof StreamServerError) return new AttemptError(`the server reported an error in the stream: ${error.serverMessage}`, null, false);
  if (error instanceof SyntaxError) return new AttemptError(`the server sent invalid JSON: ${error.message}`, null, false);
  const Sdk = sdk.constructor as typeof OpenAI;
  if (error instanceof Sdk.APIConnectionTimeoutError) return new AttemptError(`no response from the server for ${timeoutMs} ms`, null, true);
  if (error instanceof Sdk.APIError && typeof error.status === "number") {
    const status = error.status;
    const headers = error.headers instanceof Headers ? error.headers : undefined;
    const raw = headers ? errorBodyOf(headers) : undefined;
    const detail =
      raw !== undefined ? withHint(describeErrorBody(raw, headers?.get("content-type") ?? ""))
      : error.error !== undefined && error.error !== null ? errorText(error.error)
      : "(no error message)";
    const shouldRetry = headers?.get("x-should-retry");
    const retryable = shouldRetry === "true" ? true : shouldRetry === "false" ? false : isRetryableStatus(status);
    return new AttemptError(`HTTP ${status}: ${detail}`, status, retryable, headers, raw);
  }
  const name = (error as { name?: unknown } | null)?.name;
  if (error instanceof Sdk.APIConnectionError || error instanceof Sdk.APIUserAbortError || name === "TypeError" || name === "AbortError") {
    return new AttemptError(`connection failed: ${rootCauseText(error)}`, null, true);
  }
  return new AttemptError(error instanceof Error ? error.message : String(error), null, false);
}

/** The innermost cause's message, e.g. `connect ECONNREFUSED 127.0.0.1:9`. */
function rootCauseText(error: unknown): string {
  const texts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    const message = (current as { message?: unknown }).message;
    const code = (current as { code?: unknown }).code;
    if (typeof message === "string" && message !== "") texts.push(typeof code === "string" && !message.includes(code) ? `${message} (${code})` : message);
    current = (current as { cause?: unknown }).cause;
  }
  return texts.length > 0 ? texts[texts.length - 1] : "unknown error";
}

function abortedError(where: string): ModelError {
  return new ModelError(`Model request to ${where} was aborted`, null);
}
