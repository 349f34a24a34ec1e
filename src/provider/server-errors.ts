/**
 * Server error text, whatever shape the body has. Rules:
 * - JSON: the `error` key's message (`{error: {message}}`, `{error: "text"}`), else a top-level
 *   `message` (`{object: "error", message}`, `{message}`; an object message is read the same way),
 *   else FastAPI's `detail` (pydantic's list shown as `msg (body.field)`); a JSON array
 *   (Gemini wraps errors in one) is read by its first item; anything else is shown as JSON.
 * - Not JSON: the text itself, whitespace collapsed; HTML is reduced to its title or its text.
 *   Either way a hint says to check the base URL (an HTML or plain-text answer usually means the
 *   URL points at a web page or proxy, not at an OpenAI-compatible API).
 * - Texts are cut at MAX_DETAIL_CHARS characters (never inside a secret: ../loop/redact.ts); of
 *   a non-JSON body only the start is read.
 */
import { cutText } from "../redact.js";
import { FetchResponse } from "./http/response.js";

const MAX_DETAIL_CHARS = 600;
/** Only the start of a long non-JSON body is looked at. */
const MAX_SCANNED_CHARS = 65_536;

export const BASE_URL_HINT = "check that the base URL points at an OpenAI-compatible API, usually ending in /v1";

export interface ServerErrorText {
  /** The server's own message. */
  detail: string;
  /** Set when the body was not JSON. */
  hint?: string;
}

/** The message of a raw error body (see module rules). */
export function describeErrorBody(raw: string, contentType = ""): ServerErrorText {
  const text = raw.trim();
  if (text === "") return { detail: "(empty response body)" };
  const parsed = parseJson(text);
  if (parsed.ok) return { detail: cut(jsonErrorText(parsed.value)) };
  return describeNonJson(text, contentType);
}

/** A body that is not JSON: its title or text, with the base-URL hint. */
export function describeNonJson(body: string, contentType = ""): ServerErrorText {
  const text = body.length > MAX_SCANNED_CHARS ? body.slice(0, MAX_SCANNED_CHARS) : body;
  const html = /html/i.test(contentType) || /^\s*</.test(text);
  if (!html) return { detail: cut(collapse(text)) || "(empty response body)", hint: `the response is not JSON: ${BASE_URL_HINT}` };
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1];
  const shown = collapse(decodeEntities(stripTags(title && title.trim() !== "" ? title : text)));
  return { detail: cut(shown === "" ? "(an HTML page)" : shown), hint: `the server answered with an HTML page, not JSON: ${BASE_URL_HINT}` };
}

/** The message of a server error object (`{message}`, `{error: …}`, or anything else, serialised). */
export function errorText(error: unknown): string {
  if (typeof error === "string") return error;
  if (error && typeof error === "object") {
    const loose = error as Record<string, unknown>;
    if (typeof loose.message === "string") return loose.message;
    if (loose.error !== undefined && loose.error !== null) return errorText(loose.error);
  }
  return JSON.stringify(error);
}

/** The error message inside a parsed JSON body. */
export function jsonErrorText(value: unknown): string {
  if (Array.isArray(value)) return value.length > 0 ? jsonErrorText(value[0]) : "[]";
  if (value !== null && typeof value === "object") {
    const body = value as Record<string, unknown>;
    if (body.error !== undefined && body.error !== null && body.error !== false) return errorText(body.error);
    if (typeof body.message === "string" && body.message !== "") return body.message;
    if (body.message !== null && typeof body.message === "object") return jsonErrorText(body.message);
    if (body.detail !== undefined) return detailText(body.detail);
  }
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * The raw body of each error response, by the identity of its `Headers` (the SDK hands the same
 * object to its error). The SDK keeps only a body's `error` key, which loses `{message}`,
 * `{object: "error", message}` and array bodies; this keeps the text for `describeErrorBody`.
 */
const errorBodies = new WeakMap<Headers, string>();

/** The raw body of the error response whose headers these are (see `keepingErrorBodies`). */
export function errorBodyOf(headers: Headers): string | undefined {
  return errorBodies.get(headers);
}

/** A fetch that reads each error response's body once and keeps it for `errorBodyOf`. */
export function keepingErrorBodies(inner: typeof globalThis.fetch): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    if (response.ok) return response;
    const text = await response.text();
    const copy = new FetchResponse(text === "" ? null : text, { status: response.status, statusText: response.statusText, headers: response.headers, url: response.url, redirected: response.redirected });
    errorBodies.set(copy.headers as unknown as Headers, text);
    return copy as unknown as Response;
  };
}

/** Whether an error is a 400/422 that names `stream_options` (any wording: the resend is cheap). */
export function namesStreamOptions(status: number | null, text: string): boolean {
  return (status === 400 || status === 422) && /stream_options/.test(text);
}

/**
 * Whether an error (status and body text) is the server refusing a request field named `field…`:
 * a 400 or 422 whose text names it next to words like unsupported, unknown, extra, not permitted.
 * A complaint that the field is missing (DeepSeek's "Missing `reasoning_content`") is not one.
 */
export function refusesField(status: number | null, text: string, field: string): boolean {
  if (status !== 400 && status !== 422) return false;
  if (!new RegExp(`\\b${field}`, "i").test(text) || /\bmissing\b/i.test(text)) return false;
  return /unsupported|not supported|unknown|unrecognized|extra|not permitted|not allowed/i.test(text);
}

/** A 200 body parsed as JSON, or its text when it is not JSON (whatever its content type says). */
export async function jsonOrText(response: Response): Promise<unknown> {
  const text = await response.text();
  const parsed = parseJson(text);
  return parsed.ok ? parsed.value : text;
}

/** FastAPI/pydantic `detail`: a string, or a list of `{msg, loc}` shown as `msg (body.field)`. */
function detailText(detail: unknown): string {
  if (typeof detail === "string") return detail;
  if (!Array.isArray(detail)) return JSON.stringify(detail);
  return detail
    .map((item: { msg?: unknown; loc?: unknown }) =>
      typeof item?.msg === "string" ? (Array.isArray(item.loc) ? `${item.msg} (${item.loc.join(".")})` : item.msg) : JSON.stringify(item),
    )
    .join("; ");
}

/** `text` with `' (…)'` appended when `hint` is set. */
export function withHint(error: ServerErrorText): string {
  return error.hint ? `${error.detail} (${error.hint})` : error.detail;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function stripTags(html: string): string {
  return html.replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, " ").replace(/<[^>]*>/g, " ");
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", apos: "'", nbsp: " " };

function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, name: string) => ENTITIES[name]);
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** The first MAX_DETAIL_CHARS of `text`; never inside a secret (cutText), so redaction later hides it whole. */
function cut(text: string): string {
  return cutText(text, MAX_DETAIL_CHARS, () => "…");
}
