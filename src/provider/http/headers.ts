/**
 * HTTP headers with the semantics of the Fetch standard's `Headers` (the subset a model client
 * uses), for the model client's own `fetch` (./node-fetch.ts). Rules:
 * - names are HTTP tokens and compared without case; they are kept lower-cased;
 * - a value has its leading and trailing HTTP whitespace removed, and may not hold NUL, CR, LF
 *   or a character past U+00FF (a TypeError, as `Headers` throws);
 * - `get` joins a name's values with ", "; iteration is sorted by name and yields each name once
 *   with its joined value, except `set-cookie`, whose values are yielded one by one;
 * - it never refers to the global `Headers`: on Node 20 touching that global loads Node's whole
 *   fetch implementation (undici and ~40 built-in modules, ~50 ms of a start,
 *   docs/performance.md), which is what this class is for. The openai vendor bundle is built
 *   with this class in the place of the global (scripts/bundle.mjs).
 */

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;
/** NUL, CR, LF, and anything past Latin-1 (a header value is a byte string). */
const FORBIDDEN_IN_VALUE = /[\0\r\n\u0100-\uffff]/;

/** What a `Headers` constructor takes: headers (anything iterable as pairs), pairs, or a record. */
export type HeadersSource = Iterable<readonly [string, string]> | Iterable<readonly string[]> | Record<string, string> | null | undefined;

function checkedName(name: string): string {
  const text = String(name);
  if (!TOKEN.test(text)) throw new TypeError(`invalid header name: ${JSON.stringify(text)}`);
  return text.toLowerCase();
}

function checkedValue(name: string, value: string): string {
  const text = String(value).replace(EDGE_WHITESPACE, "");
  if (FORBIDDEN_IN_VALUE.test(text)) throw new TypeError(`invalid value for header ${JSON.stringify(name)}`);
  return text;
}

/** Fetch-standard headers that never load Node's fetch (rules above). */
export class FetchHeaders {
  /** Lower-cased name → its values, in the order they were added. */
  readonly #values = new Map<string, string[]>();

  constructor(init?: HeadersSource | FetchHeaders) {
    if (init === null || init === undefined) return;
    if (typeof init !== "object") throw new TypeError("headers must be an object");
    if (Symbol.iterator in init) {
      for (const pair of init as Iterable<readonly string[]>) {
        if (typeof pair !== "object" || pair === null) throw new TypeError("a header pair must be a sequence of two strings");
        const row = [...pair];
        if (row.length !== 2) throw new TypeError("a header pair must have exactly two items");
        this.append(row[0], row[1]);
      }
      return;
    }
    for (const [name, value] of Object.entries(init as Record<string, string>)) this.append(name, value);
  }

  append(name: string, value: string): void {
    const key = checkedName(name);
    const text = checkedValue(key, value);
    const values = this.#values.get(key);
    if (values) values.push(text);
    else this.#values.set(key, [text]);
  }

  set(name: string, value: string): void {
    const key = checkedName(name);
    this.#values.set(key, [checkedValue(key, value)]);
  }

  delete(name: string): void {
    this.#values.delete(checkedName(name));
  }

  has(name: string): boolean {
    return this.#values.has(checkedName(name));
  }

  get(name: string): string | null {
    return this.#values.get(checkedName(name))?.join(", ") ?? null;
  }

  getSetCookie(): string[] {
    return [...(this.#values.get("set-cookie") ?? [])];
  }

  *entries(): IterableIterator<[string, string]> {
    for (const name of [...this.#values.keys()].sort()) {
      const values = this.#values.get(name);
      if (!values) continue;
      if (name === "set-cookie") for (const value of values) yield [name, value];
      else yield [name, values.join(", ")];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  forEach(callback: (value: string, name: string, headers: FetchHeaders) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this);
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return "Headers";
  }
}

/** Whether `value` reads like headers (a `Headers` of any implementation), checked without touching the global `Headers`. */
export function isHeadersLike(value: unknown): value is Headers {
  return typeof value === "object" && value !== null && typeof (value as Headers).get === "function" && typeof (value as Headers).entries === "function";
}
