/**
 * When a failed model request is retried, and after how long. Retried: 408, 409, 429 and 5xx.
 * Delay: the server's `retry-after-ms` / `retry-after` (seconds or an HTTP date), capped at 30 s,
 * else exponential backoff from 500 ms to 8 s with up to 25% jitter.
 */
const MAX_RETRY_AFTER_MS = 30_000;
const BACKOFF_INITIAL_MS = 500;
const BACKOFF_MAX_MS = 8_000;

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Delay before retry number `attempt` (1-based): the server's hint, else exponential backoff with jitter. */
export function retryDelayMs(attempt: number, headers?: Headers): number {
  const hinted = retryAfterMs(headers);
  if (hinted !== undefined) return Math.min(Math.max(0, Math.round(hinted)), MAX_RETRY_AFTER_MS);
  const base = Math.min(BACKOFF_INITIAL_MS * 2 ** (attempt - 1), BACKOFF_MAX_MS);
  return Math.round(base * (1 - Math.random() * 0.25));
}

/** The server's `retry-after-ms` / `retry-after` (seconds or an HTTP date) in ms, uncapped; undefined without one. */
export function retryAfterMs(headers?: Headers): number | undefined {
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms)) return ms;
  const value = headers?.get("retry-after");
  if (!value) return undefined;
  const seconds = Number.parseFloat(value);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isFinite(date) ? date - Date.now() : undefined;
}


/**
 * Whether a retryable failure only repeats the previous attempt's: an HTTP 500 with the same
 * message, and no sign from the server that waiting helps (`retry-after`, `retry-after-ms`,
 * `x-should-retry: true`). llama.cpp answers 500 for request errors that never change ("tools
 * param requires --jinja flag"); a passing 500 usually differs (OpenAI's names a request id), and
 * 429, 502, 503 and 504, which repeat their text while they last, keep the whole retry budget.
 */
export function repeatsItself(status: number | null, headers: Headers | undefined, message: string, previous: string | undefined): boolean {
  if (status !== 500 || previous === undefined || message !== previous) return false;
  return !headers?.has("retry-after") && !headers?.has("retry-after-ms") && headers?.get("x-should-retry") !== "true";
}
