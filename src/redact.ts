/**
 * Hiding secret values in what a run writes out (events, the printed result, replay files).
 * Rules: every occurrence of a secret inside any string value becomes `***` (longest secret
 * first); object keys, numbers and booleans are kept; values with `toJSON` are redacted in their
 * JSON form; a cycle becomes "[Circular]". With no secrets the value is returned untouched.
 * Copy on write: a plain object or array (literal prototype) in which nothing had to change is
 * returned as it is, not copied (events are redacted one by one, so copying each would be most
 * of their cost); anything else is copied into a plain object or array, as JSON would see it.
 * Streamed text is redacted across pieces: a piece's tail that could be the start of a secret is
 * held back until the next piece (or the flush) shows whether it is one.
 * Cuts never split a secret: every redactor's secrets are remembered for the process, and
 * `cutText` (the tool-result cut, the server-error cut) moves a cut that would fall inside one to
 * its start, so what is redacted afterwards shows no first characters of a key.
 */

export type Redactor = <T>(value: T) => T;

/** `text` with every one of `secrets` replaced by `***` (longest first; empty strings ignored). */
export function redactText(text: string, secrets: readonly string[]): string {
  return redactString(text, secretList(secrets));
}

export const REDACTED = "***";

/** Every secret a redactor was made for in this process: no cut splits one. */
const uncuttable = new Set<string>();

/**
 * `text` cut to at most `max` characters plus `marker(cutCount)` when longer; a cut that would
 * fall inside a known secret falls at its start instead (see module rules).
 */
export function cutText(text: string, max: number, marker: (cut: number) => string): string {
  if (text.length <= max) return text;
  let at = max;
  for (let moved = true; moved; ) {
    moved = false;
    for (const secret of uncuttable) {
      const from = Math.max(0, at - secret.length + 1);
      const found = text.indexOf(secret, from);
      if (found >= 0 && found < at && found + secret.length > at) {
        at = found;
        moved = true;
      }
    }
  }
  return `${text.slice(0, at)}${marker(text.length - at)}`;
}

/** A redactor for `secrets` (empty strings ignored). */
export function createRedactor(secrets: readonly string[]): Redactor {
  const list = secretList(secrets);
  for (const secret of list) uncuttable.add(secret);
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
      return Array.isArray(value) ? walkArray(value) : walkObject(value as Record<string, unknown>);
    } finally {
      ancestors.pop();
    }
  };
  const walkArray = (array: unknown[]): unknown[] => {
    let copy: unknown[] | null = Object.getPrototypeOf(array) === Array.prototype ? null : [];
    for (let i = 0; i < array.length; i++) {
      const item = array[i];
      const redacted = walk(item);
      if (copy) copy[i] = redacted;
      else if (redacted !== item) {
        copy = array.slice(0, i);
        copy[i] = redacted;
      }
    }
    return copy ?? array;
  };
  const walkObject = (object: Record<string, unknown>): Record<string, unknown> => {
    const prototype = Object.getPrototypeOf(object);
    const keys = Object.keys(object);
    let copy: Record<string, unknown> | null = prototype === Object.prototype || prototype === null ? null : {};
    for (let i = 0; i < keys.length; i++) {
      const item = object[keys[i]];
      const redacted = walk(item);
      if (copy) setOwn(copy, keys[i], redacted);
      else if (redacted !== item) {
        copy = {};
        for (let j = 0; j < i; j++) setOwn(copy, keys[j], object[keys[j]]);
        setOwn(copy, keys[i], redacted);
      }
    }
    return copy ?? object;
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

/** `object[key] = value` as an own property, also for the key `__proto__` (as Object.fromEntries does). */
function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}

function redactString(s: string, list: readonly string[]): string {
  let out = s;
  for (const secret of list) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}
