/** Turning the model's raw argument string into an arguments object. */

export type ParsedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/** Arguments nested deeper than this are refused: deeper values overflow the stack of JSON.stringify. */
export const MAX_ARGUMENT_DEPTH = 64;

/**
 * Rules: `""` (or only white space) means `{}`; a JSON string that itself holds a JSON object is
 * unwrapped (some models double-encode); anything else must be a JSON object, nested at most
 * MAX_ARGUMENT_DEPTH levels.
 */
export function parseToolArguments(raw: unknown): ParsedArguments {
  const parsed = parseUnchecked(raw);
  if (parsed.ok && depthExceeds(parsed.value, MAX_ARGUMENT_DEPTH)) {
    return { ok: false, error: `arguments are nested more than ${MAX_ARGUMENT_DEPTH} levels deep` };
  }
  return parsed;
}

function parseUnchecked(raw: unknown): ParsedArguments {
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

/** Whether `value` has objects or arrays nested more than `max` levels (iterative: safe for any depth). */
function depthExceeds(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== "object" || seen.has(current)) continue;
    if (depth > max) return true;
    seen.add(current);
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}
