/**
 * Hiding secret values in what a run writes out (events, the printed result, replay files).
 * Rules: every occurrence of a secret inside any string value becomes `***` (longest secret
 * first); object keys, numbers and booleans are kept; values with `toJSON` are redacted in their
 * JSON form; a cycle becomes "[Circular]". With no secrets the value is returned untouched.
 */

export type Redactor = <T>(value: T) => T;

export const REDACTED = "***";

/** A redactor for `secrets` (empty strings ignored). */
export function createRedactor(secrets: readonly string[]): Redactor {
  const list = [...new Set(secrets.filter((s) => s !== ""))].sort((a, b) => b.length - a.length);
  if (list.length === 0) return (value) => value;
  const text = (s: string): string => {
    let out = s;
    for (const secret of list) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  };
  const walk = (value: unknown, ancestors: object[]): unknown => {
    if (typeof value === "string") return text(value);
    if (value === null || typeof value !== "object") return value;
    if (typeof (value as { toJSON?: unknown }).toJSON === "function") return walk((value as { toJSON(): unknown }).toJSON(), ancestors);
    if (ancestors.includes(value)) return "[Circular]";
    const inner = [...ancestors, value];
    if (Array.isArray(value)) return value.map((item) => walk(item, inner));
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item, inner)]));
  };
  return <T>(value: T): T => walk(value, []) as T;
}
