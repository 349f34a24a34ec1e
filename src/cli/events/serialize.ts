/**
 * Serialising an event to one JSON line without ever losing it.
 *
 * Rules:
 * - The fast path is plain `JSON.stringify`.
 * - When that throws (BigInt, a cycle, a getter or `toJSON` that throws, a revoked Proxy, nesting
 *   deep enough to overflow the stack), the event is copied by `toJsonSafe` and the copy is
 *   serialised: every value that cannot be read or converted is replaced by a string naming the
 *   problem, so the event is still written, with its `seq`, and only the bad part is marked.
 * - U+0085, U+2028 and U+2029 are written as `\uXXXX` (see `escapeJsonLineBreaks`), so a reader
 *   that splits lines on them still sees one event per line.
 */
import { escapeJsonLineBreaks } from "./sanitize.js";

/** Copies deeper than this are cut with a marker (JSON readers have limits too). */
const MAX_JSON_DEPTH = 200;

/** One event as JSON, never throwing (see module rules). */
export function serializeEvent(event: object): string {
  let json: string;
  try {
    json = JSON.stringify(event);
  } catch {
    json = JSON.stringify(toJsonSafe(event)) ?? "null";
  }
  return escapeJsonLineBreaks(json);
}

/**
 * A plain copy of `value` as JSON would see it, that `JSON.stringify` can always serialise:
 * BigInt becomes its decimal string, a cycle "[Circular]", anything deeper than MAX_JSON_DEPTH
 * "[Too deep]", and a value whose reading or `toJSON` throws "[unserializable: <message>]".
 * Functions, symbols and undefined are left out of objects as JSON does (null in arrays).
 */
export function toJsonSafe(value: unknown): unknown {
  const ancestors: object[] = [];
  const copy = (item: unknown, key: string, depth: number): unknown => {
    try {
      if (item !== null && typeof item === "object" && typeof (item as { toJSON?: unknown }).toJSON === "function") {
        item = (item as { toJSON(key: string): unknown }).toJSON(key);
      }
      if (typeof item === "bigint") return item.toString();
      if (item === null || typeof item !== "object") return item;
      if (ancestors.includes(item)) return "[Circular]";
      if (depth >= MAX_JSON_DEPTH) return "[Too deep]";
      ancestors.push(item);
      try {
        if (Array.isArray(item)) {
          const out: unknown[] = [];
          for (let i = 0; i < item.length; i++) out.push(readAndCopy(item as unknown as Record<number, unknown>, i, depth));
          return out;
        }
        const out: Record<string, unknown> = {};
        for (const k of Object.keys(item)) {
          const v = readAndCopy(item as Record<string, unknown>, k, depth);
          if (v !== undefined && typeof v !== "function" && typeof v !== "symbol") setOwn(out, k, v);
        }
        return out;
      } finally {
        ancestors.pop();
      }
    } catch (error) {
      return unserializable(error);
    }
  };
  const readAndCopy = (holder: Record<string | number, unknown>, k: string | number, depth: number): unknown => {
    let item: unknown;
    try {
      item = holder[k];
    } catch (error) {
      return unserializable(error);
    }
    const out = copy(item, String(k), depth + 1);
    return Array.isArray(holder) && (out === undefined || typeof out === "function" || typeof out === "symbol") ? null : out;
  };
  return copy(value, "", 0);
}

function unserializable(error: unknown): string {
  let message: string;
  try {
    message = error instanceof Error ? error.message : String(error);
  } catch {
    message = "unknown error";
  }
  return `[unserializable: ${message}]`;
}

/** `object[key] = value` as an own property, also for the key `__proto__`. */
function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}
