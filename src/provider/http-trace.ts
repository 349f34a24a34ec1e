/**
 * `--debug` / `YIEM_DEBUG=http`: what went over the wire, one exchange per HTTP request, from a
 * wrapper of the `fetch` the openai client uses. Rules:
 * - an exchange has the method, URL, status (null when no response came), the time to the
 *   response headers and to the end of its body, the retry number (0: the first attempt) and the
 *   request and response bodies as text, each cut to DEBUG_BODY_MAX_CHARS (docs/events.md);
 * - no header is recorded (the Authorization header carries the key); the bodies and the URL are
 *   redacted where the exchange becomes an event (the run's redactor, ../redact.ts, whose
 *   cut never splits a secret);
 * - the response body is observed as the client reads it, never read on its own: the exchange is
 *   reported when the body ends, fails or is cancelled, once; a cancel with the reason
 *   `BODY_READ_ENOUGH` (the stream reader had the whole answer at `[DONE]`) is an end, any other
 *   cancel an error ("the body was not read to its end");
 * - a `fetch` that throws is reported with `error`, then the throw goes on.
 */
import { cutText } from "../redact.js";
import { FetchResponse, type BodySource } from "./http/response.js";

/** The reason a reader cancels a body with when it has all it needs (a stream at `[DONE]`): not a failure. */
export const BODY_READ_ENOUGH = Symbol("the body was read to its end for the caller");

/** Each body in a debug event is cut to this many characters. */
export const DEBUG_BODY_MAX_CHARS = 4_000;

export interface HttpExchange {
  method: string;
  url: string;
  /** null: no response (connection refused, aborted, timed out). */
  status: number | null;
  /** From sending the request to the response headers. */
  headersMs: number;
  /** From sending the request to the end of the response body (or the failure). */
  durationMs: number;
  /** 0 for the first attempt of a request, 1 for the first retry… */
  retry: number;
  requestBody: string;
  responseBody: string;
  /** Why no response came, or why its body broke off. */
  error?: string;
}

/** `text` cut to DEBUG_BODY_MAX_CHARS; `dropped` characters were not even kept. */
const cut = (text: string, dropped = 0) => cutText(text, DEBUG_BODY_MAX_CHARS, (n) => `… [${n + dropped} more characters]`);

function bodyText(body: unknown): string {
  if (body === undefined || body === null) return "";
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return new TextDecoder().decode(body);
  return `(${Object.prototype.toString.call(body).slice(8, -1)} body)`;
}

/** `inner`, reporting every exchange to `report`; `retry()` tells the current retry number. */
export function tracingFetch(inner: typeof globalThis.fetch, report: (exchange: HttpExchange) => void, retry: () => number): typeof globalThis.fetch {
  return async (input, init) => {
    const started = performance.now();
    const request = typeof input === "string" || input instanceof URL ? undefined : input;
    const base = {
      method: (init?.method ?? request?.method ?? "GET").toUpperCase(),
      url: typeof input === "string" ? input : input instanceof URL ? input.href : input.url,
      retry: retry(),
      requestBody: cut(bodyText(init?.body)),
    };
    const elapsed = () => Math.round(performance.now() - started);
    let response: Response;
    try {
      response = await inner(input, init);
    } catch (error) {
      report({ ...base, status: null, headersMs: elapsed(), durationMs: elapsed(), responseBody: "", error: (error as Error)?.message ?? String(error) });
      throw error;
    }
    const headersMs = elapsed();
    let reported = false;
    let text = "";
    let chars = 0;
    const decoder = new TextDecoder();
    // Twice the shown size is kept, so that the cut can move to the start of a secret (cutText).
    const keep = (piece: string) => {
      chars += piece.length;
      if (text.length < 2 * DEBUG_BODY_MAX_CHARS) text += piece.slice(0, 2 * DEBUG_BODY_MAX_CHARS - text.length);
    };
    const finish = (error?: string) => {
      if (reported) return;
      reported = true;
      keep(decoder.decode());
      report({ ...base, status: response.status, headersMs, durationMs: elapsed(), responseBody: cut(text, chars - text.length), ...(error ? { error } : {}) });
    };
    if (!response.body) {
      finish();
      return response;
    }
    const reader = response.body.getReader();
    const observed: BodySource = {
      chunks: {
        async next() {
          try {
            const { done, value } = await reader.read();
            if (done) {
              finish();
              return { done: true, value: undefined };
            }
            keep(decoder.decode(value, { stream: true }));
            return { done: false, value };
          } catch (error) {
            finish((error as Error)?.message ?? String(error));
            throw error;
          }
        },
      },
      cancel(reason) {
        finish(reason === BODY_READ_ENOUGH ? undefined : "the body was not read to its end");
        reader.cancel(reason).catch(() => {});
      },
    };
    const traced = new FetchResponse(observed, { status: response.status, statusText: response.statusText, headers: response.headers, url: response.url, redirected: response.redirected });
    return traced as unknown as Response;
  };
}
