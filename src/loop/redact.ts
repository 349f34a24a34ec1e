/**
 * Hiding secret values in what a run writes out (events, the printed result, replay files).
 * Rules: every occurrence of a secret inside any string value becomes `***` (longest secret
 * first); object keys, numbers and booleans are kept; values with `toJSON` are redacted in their
 * JSON form; a cycle becomes "[Circular]". With no secrets the value is returned untouched.
 * Streamed text is redacted across pieces: a piece's tail that could be the start of a secret is
 * held back until the next piece (or the flush) shows whether it is one.
 */

export type Redactor = <T>(value: T) => T;

export const REDACTED = "***";

/** A redactor for `secrets` (empty strings ignored). */
export function createRedactor(secrets: readonly string[]): Redactor {
  const list = secretList(secrets);
  if (list.length === 0) return (value) => value;
  const text = (s: string) => redactString(s, list);
  const ancestors: object[] = [];
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return text(value);
    if (value === null || typeof value !== "object") return value;
    if (typeof (value as { toJSON?: unknown }).toJSON === "function") return walk((value as { toJSON(): unknown }).toJSON());
    if (ancestors.includes(value)) return "[Circular]";
    ancestors.push(value);
    try {
      if (Array.isArray(value)) return value.map(walk);
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item)]));
    } finally {
      ancestors.pop();
    }
  };
  return <T>(value: T): T => walk(value) as T;
}

export interface StreamRedactor {
  /** Takes the next piece; returns the redacted text that is safe to show now (maybe ""). */
  push(piece: string): string;
  /** Returns whatever is still held back, redacted, and starts over. */
  flush(): string;
}

/** A redactor for text that arrives in pieces (see module rules). */
export function createStreamRedactor(secrets: readonly string[]): StreamRedactor {
  const list = secretList(secrets);
  let held = "";
  return {
    push(piece) {
      const text = held + piece;
      let keep = 0;
      for (const secret of list) {
        for (let n = Math.min(secret.length - 1, text.length); n > keep; n--) {
          if (text.endsWith(secret.slice(0, n))) {
            keep = n;
            break;
          }
        }
      }
      held = text.slice(text.length - keep);
      return redactString(text.slice(0, text.length - keep), list);
    },
    flush() {
      const rest = redactString(held, list);
      held = "";
      return rest;
    },
  };
}

function secretList(secrets: readonly string[]): string[] {
  return [...new Set(secrets.filter((s) => s !== ""))].sort((a, b) => b.length - a.length);
}

function redactString(s: string, list: readonly string[]): string {
  let out = s;
  for (const secret of list) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}
