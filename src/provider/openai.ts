/**
 * The Chat Completions provider, over the `openai` package (loaded on the first request).
 * Rules:
 * - Streams by default (`stream` "auto", with `stream_options.include_usage`); text deltas are
 *   reported as they arrive (without streaming, the whole text is reported once).
 * - The SDK runs with `maxRetries: 0`; this file retries, so every retry is reported via `onRetry`.
 *   Retried: 408, 409, 429, 5xx, connection errors, timeouts, and a stream cut before its end,
 *   as long as no text of this request was reported yet. Never retried: other 4xx (400, 401 …),
 *   401 and 403 even when the server says `x-should-retry: true`, and a 500 that repeats the
 *   previous attempt's message (see `repeatsItself`).
 *   Delay: `retry-after-ms` / `retry-after` (capped at 30 s), else exponential backoff with jitter.
 * - A 401 or 403 names where the key came from: "the server at URL rejected the key in $VAR"
 *   (`apiKeyEnv`), or says that no key is set.
 * - `timeoutMs` is an inactivity limit: no response headers, or no stream data, for that long.
 * - The request's abort signal cancels the request, the stream and any retry wait.
 * - A setting the server refuses (`stream_options` and streaming under "auto", reasoning fields
 *   sent back, `max_tokens`) is given up once: the request is sent again at once without it, not
 *   counted as a retry, and without it for the rest of the run (see resend.ts).
 * - Reasoning the server sends is marked with this model and base URL, and reasoning goes back
 *   only to the same model and base URL (see reasoning.ts).
 * - Failures end in `ModelError(message, status)`; the message names the status and the server's
 *   own error text, whatever the body's shape (see server-errors.ts), and never contains the API
 *   key. A 200 answer that holds an error (`{error}` JSON, an error in the stream) is a failure too.
 * - The package's own log lines (`OPENAI_LOG`) go to the request's `onSdkLog` (see sdk-log.ts).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type OpenAI from "openai";
import type { ModelRequest, ModelResponse, Provider, RetryInfo } from "./types.js";
import { ModelError } from "./types.js";
import { buildRequestBody, serializeRequestBytes, type BodySettings, type MaxTokensField } from "./wire.js";
import { parseUsage, parseWireMessage, wireUsageOf } from "./wire-response.js";
import { SseParser, StreamAssembler, StreamServerError } from "./openai-stream.js";
import { isRetryableStatus, repeatsItself, retryDelayMs } from "./retry.js";
import { describeNonJson, errorText, jsonOrText, keepingErrorBodies, withHint } from "./server-errors.js";
import { carriesReasoning, markReasoning, reasoningFor, reasoningOrigin, modelBaseURL, shownBaseURL } from "./reasoning.js";
import { giveUpRefusedSetting, type ResendState } from "./resend.js";
import { AttemptError, rootCauseText, toAttemptError } from "./attempt-error.js";
import { BODY_READ_ENOUGH, tracingFetch, type HttpExchange } from "./http-trace.js";
import { nodeFetch } from "./http/node-fetch.js";
import { redactText } from "../redact.js";
import { MODEL_DEFAULTS } from "./defaults.js";
import { createSdkClient } from "./openai-client.js";
import { createSdkLogRouting } from "./sdk-log.js";


/** Whether streamed requests ask for usage: "auto" asks and stops asking when the server refuses. */
export type StreamUsage = "auto" | boolean;

/** Whether requests stream: "auto" streams and stops when the server refuses to stream with tools. */
export type StreamMode = "auto" | boolean;

export interface OpenAIProviderOptions {
  model: string;
  /** Default: `OPENAI_BASE_URL` of `env`, else OpenAI's API. */
  baseURL?: string;
  /**
   * Default: the variable `apiKeyEnv` names (`OPENAI_API_KEY` when none is named) of `env`, and
   * never another one: a spec that names its own variable, left unset, does not send the OpenAI
   * key to its server. A placeholder is sent when no key is set (local servers).
   */
  apiKey?: string;
  /**
   * The environment the defaults above and the client's other settings come from
   * (./openai-client.ts: organization, project, custom headers, log level). The CLI passes its
   * io.env; only a library caller that gives none gets the process's own (`process.env`).
   */
  env?: NodeJS.ProcessEnv;
  /** The name of the variable the key comes from (see `apiKey`), also for the message when the server rejects it. */
  apiKeyEnv?: string;
  temperature?: number;
  maxTokens?: number;
  /** The request field for `maxTokens` (default `max_tokens`). */
  maxTokensField?: MaxTokensField;
  /** Default "auto": stream, and stop when the server cannot stream with tools (see resend.ts). */
  stream?: StreamMode;
  /** Default "auto" (see the module rules). */
  streamUsage?: StreamUsage;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** Inactivity limit per attempt, ms (default 600000). */
  timeoutMs?: number;
  /** The HTTP client (default: ./http/node-fetch.ts, Node's http without its fetch). */
  fetch?: typeof globalThis.fetch;
  /** `--debug`: called with every HTTP exchange (see http-trace.ts). */
  onHttp?: (exchange: HttpExchange) => void;
}

const DEFAULT_MAX_RETRIES = MODEL_DEFAULTS.maxRetries;
const DEFAULT_TIMEOUT_MS = MODEL_DEFAULTS.timeoutMs;
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

export function createOpenAIProvider(opts: OpenAIProviderOptions): Provider {
  const stream = opts.stream ?? MODEL_DEFAULTS.stream;
  const maxRetries = Math.max(0, Math.floor(opts.maxRetries ?? DEFAULT_MAX_RETRIES));
  const timeoutMs = opts.timeoutMs && opts.timeoutMs > 0 ? Math.min(Math.ceil(opts.timeoutMs), MAX_TIMER_MS) : DEFAULT_TIMEOUT_MS;
  const env = opts.env ?? process.env;
  const keyVariable = opts.apiKeyEnv ?? MODEL_DEFAULTS.apiKeyEnv;
  const apiKey = opts.apiKey || env[keyVariable] || undefined;
  const streamUsage = opts.streamUsage ?? "auto";
  const settings: BodySettings = {
    model: opts.model,
    temperature: opts.temperature,
    maxTokens: opts.maxTokens,
    maxTokensField: opts.maxTokensField,
    stream: stream !== false,
    streamUsage: streamUsage !== false,
  };
  // The key itself is hidden from the messages this client writes, also when it is short.
  const redact = (text: string) => (apiKey && apiKey.length >= 4 ? redactText(text, [apiKey]) : text);
  // The base URL the SDK is given: the option, else OPENAI_BASE_URL of env, else OpenAI's API.
  const baseURL = modelBaseURL(opts.baseURL, env);
  const where = shownBaseURL(baseURL);
  const origin = reasoningOrigin(opts.model, where);

  /** The retry number of the request being sent, for `onHttp`. */
  let retryNumber = 0;
  const onHttp = opts.onHttp;
  const baseFetch = opts.fetch ?? nodeFetch;
  const fetch = onHttp ? tracingFetch(baseFetch, onHttp, () => retryNumber) : baseFetch;
  // The package's own log lines go to the request being served (sdk-log.ts), never to the console.
  const sdkLog = createSdkLogRouting(redact);
  let client: Promise<OpenAI> | undefined;
  const getClient = () =>
    (client ??= createSdkClient({
      apiKey: apiKey ?? NO_KEY_PLACEHOLDER,
      baseURL,
      timeout: timeoutMs + 1_000,
      headers: JSON_HEADERS,
      fetch: keepingErrorBodies(fetch),
      logger: sdkLog.logger,
      env,
    }));

  const resend: ResendState = { settings, streamUsageAuto: streamUsage === "auto", streamAuto: stream === "auto", sendReasoning: true };
  /** Where the key came from, for a 401/403: `$VAR`, or undefined when no key is set. */
  const keySource = opts.apiKey ? (opts.apiKeyEnv ? `$${opts.apiKeyEnv}` : "the apiKey option") : apiKey ? `$${keyVariable}` : undefined;
  async function serve(request: ModelRequest): Promise<ModelResponse> {
    let messages = reasoningFor(request.messages, resend.sendReasoning ? origin : "");
    const bodyOf = (): RequestBody => ({ json: serializeRequestBytes(settings, messages, request.tools, request.responseFormat), stream: settings.stream });
    let body = bodyOf();
    const sdk = await getClient();
    /** Attempts that do not count against maxRetries (resends without a refused setting). */
    let uncounted = 0;
    /** The previous failure of this body, to stop on a server error that repeats itself (retry.ts). */
    let previous: string | undefined;
    for (let attempt = 0; ; attempt++) {
      if (request.signal.aborted) throw abortedError(origin);
      retryNumber = attempt;
      const emitted = { chars: 0 };
      try {
        return markReasoning(await runAttempt(sdk, body, request, timeoutMs, emitted), origin);
      } catch (error) {
        if (request.signal.aborted) throw abortedError(origin);
        const failure = toAttemptError(error, timeoutMs, emitted.chars, sdk);
        const message = redact(failure.message);
        // A refused optional setting: send once more without it, at once and not counted as a retry.
        const change = giveUpRefusedSetting(resend, failure.status, failure.body ?? failure.message, carriesReasoning(messages));
        if (change !== undefined) {
          if (!resend.sendReasoning) messages = reasoningFor(request.messages, "");
          body = bodyOf();
          uncounted++;
          previous = undefined;
          request.onRetry?.({ attempt: attempt + 1, delayMs: 0, status: failure.status, message: `${message} (sending the request again ${change})` });
          continue;
        }
        const tries = attempt > 0 ? ` (after ${attempt + 1} attempts)` : "";
        if (failure.status === 401 || failure.status === 403) {
          // Never retried, whatever x-should-retry says: the same key gets the same answer.
          const text = keySource
            ? `the server at ${where} rejected the key in ${keySource}: ${message}`
            : `${message} (no API key is set: set ${keyVariable}${opts.apiKeyEnv ? "" : ", or name the variable in model.apiKeyEnv"})`;
          throw new ModelError(`Model request to ${origin} failed: ${text}${tries}`, failure.status);
        }
        if (failure.retryable && repeatsItself(failure.status, failure.headers, message, previous)) {
          throw new ModelError(`Model request to ${origin} failed: ${message}${tries}; the server gave the same answer to the retry, so it is not retried again`, failure.status);
        }
        if (!failure.retryable || attempt - uncounted >= maxRetries) {
          throw new ModelError(`Model request to ${origin} failed: ${message}${tries}`, failure.status);
        }
        previous = message;
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
    complete: (request) => sdkLog.during(request.onSdkLog, () => serve(request)),
    describeRequest: (request) => buildRequestBody(settings, reasoningFor(request.messages, origin), request.tools, request.responseFormat),
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
    // At [DONE] the answer is whole: the cancel says so (the --debug trace reports no error for it).
    if (!ended) reader.cancel(assembler.sawDone ? BODY_READ_ENOUGH : undefined).catch(() => {});
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

function abortedError(where: string): ModelError {
  return new ModelError(`Model request to ${where} was aborted`, null);
}
