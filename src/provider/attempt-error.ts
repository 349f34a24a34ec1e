/**
 * A failed model request attempt, classified before the provider decides whether to retry:
 * its message (status and the server's own text), status, whether it may be retried, and the
 * response headers and raw body when there were any.
 */
import type OpenAI from "openai";
import { isHeadersLike } from "./http/headers.js";
import { StreamServerError } from "./openai-stream.js";
import { isRetryableStatus } from "./retry.js";
import { describeErrorBody, errorBodyOf, errorText, withHint } from "./server-errors.js";

/** A failed attempt, before deciding whether to retry. */
export class AttemptError extends Error {
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

/** Classify anything thrown by an attempt. `emittedChars > 0` makes every failure final. */
export function toAttemptError(error: unknown, timeoutMs: number, emittedChars: number, sdk: OpenAI): AttemptError {
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
    const headers = isHeadersLike(error.headers) ? error.headers : undefined;
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
export function rootCauseText(error: unknown): string {
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

