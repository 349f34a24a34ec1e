/**
 * `fetchJson`: one GET request that returns parsed JSON or throws an Error a model can read.
 * Rules:
 * - the request (headers and body) ends when `signal` aborts or after `timeoutMs`, whichever first;
 * - an abort says it was aborted, a timeout says how long it waited, an HTTP error names the
 *   status (and Open-Meteo's `reason` when the body has one), a network failure names the cause;
 * - messages name the service and the URL's origin only (no path, query or credentials).
 */

export interface FetchJsonOptions {
  /** Short name used in messages, e.g. "geocoding service". */
  service: string;
  signal: AbortSignal;
  timeoutMs: number;
}

export async function fetchJson(url: URL, options: FetchJsonOptions): Promise<unknown> {
  const { service, signal, timeoutMs } = options;
  if (signal.aborted) throw abortedError(service);
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = AbortSignal.any([signal, timeout]);
  let response: Response;
  try {
    response = await fetch(url, { signal: combined, headers: { accept: "application/json" } });
  } catch (error) {
    throw failure(error, url, options, timeout);
  }
  let body: string;
  try {
    body = await response.text();
  } catch (error) {
    throw failure(error, url, options, timeout);
  }
  if (!response.ok) {
    const reason = reasonFrom(body);
    const statusText = response.statusText ? ` ${response.statusText}` : "";
    throw new Error(`${service} answered HTTP ${response.status}${statusText}${reason ? `: ${reason}` : ""}`);
  }
  try {
    return JSON.parse(body);
  } catch {
    throw new Error(`${service} returned a response that is not JSON`);
  }
}

/** Reads a positive integer of milliseconds from the environment, or returns `fallback`. */
export function envMilliseconds(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`${name} must be a positive number of milliseconds (got ${JSON.stringify(raw)})`);
  }
  return Math.floor(value);
}

/** Reads a base URL from the environment, or returns `fallback`. */
export function envUrl(name: string, fallback: string): URL {
  const raw = process.env[name]?.trim() || fallback;
  try {
    return new URL(raw);
  } catch {
    throw new Error(`${name} is not a valid URL`);
  }
}

function abortedError(service: string): Error {
  return new Error(`request to the ${service} was aborted`);
}

function failure(error: unknown, url: URL, options: FetchJsonOptions, timeout: AbortSignal): Error {
  if (options.signal.aborted) return abortedError(options.service);
  if (timeout.aborted) return new Error(`request to the ${options.service} timed out after ${options.timeoutMs} ms`);
  return new Error(`could not reach the ${options.service} at ${url.origin}: ${causeOf(error)}`);
}

/** The most specific message in an error chain (fetch wraps the socket error in `cause`). */
function causeOf(error: unknown): string {
  let current: unknown = error;
  let message = "unknown error";
  for (let depth = 0; current instanceof Error && depth < 4; depth += 1) {
    const code = (current as { code?: unknown }).code;
    message = typeof code === "string" ? `${current.message} (${code})` : current.message;
    current = current.cause;
  }
  return message;
}

/** Open-Meteo errors look like `{"error": true, "reason": "..."}`. */
function reasonFrom(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { reason?: unknown };
    if (typeof parsed.reason === "string" && parsed.reason.trim()) return parsed.reason.trim().slice(0, 300);
  } catch {
    // not JSON: the status alone is the message
  }
  return undefined;
}
