/** Turning the model's raw argument string into an arguments object. */

export type ParsedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/**
 * Rules: `""` (or only white space) means `{}`; a JSON string that itself holds a JSON object is
 * unwrapped (some models double-encode); anything else must be a JSON object.
 */
export function parseToolArguments(raw: unknown): ParsedArguments {
  if (raw !== null && typeof raw === "object" && !Array.isArray(raw)) return { ok: true, value: raw as Record<string, unknown> };
  if (typeof raw !== "string") return { ok: false, error: `arguments must be a JSON object string, got ${typeof raw}` };
  if (raw.trim() === "") return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    return { ok: false, error: `arguments are not valid JSON (${(error as Error).message})` };
  }
  if (typeof value === "string") {
    try {
      const inner: unknown = JSON.parse(value);
      if (isPlainObject(inner)) value = inner;
    } catch {
      // not double-encoded; fall through to the type error below
    }
  }
  if (!isPlainObject(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
    return { ok: false, error: `arguments must be a JSON object, got ${kind}` };
  }
  return { ok: true, value };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A short, single-line rendering of arguments for error messages. */
export function previewArguments(value: unknown, max = 500): string {
  let text: string;
  try {
    text = typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}
