/**
 * A fetch `Response` for the model client's own `fetch` (./node-fetch.ts) and the wrappers around
 * it (../http-trace.ts, ../server-errors.ts). Rules:
 * - the body is read once: with `getReader()` (a reader of `read`/`cancel`/`releaseLock`), as an
 *   async iterable of byte chunks, or whole with `text()`, `json()`, `arrayBuffer()`; a second
 *   read is a TypeError, as in fetch; `bodyUsed` turns true at the first read or cancel (not at
 *   `getReader()` alone); `body` is null when the response has none;
 * - `text()` decodes UTF-8 and drops a leading BOM (as fetch does); `json()` throws the parser's
 *   SyntaxError for a body that is not JSON;
 * - cancelling (a reader's `cancel`, an iterator's `return`, `cancel()`) stops the source, which
 *   for a network body closes its connection;
 * - like ./headers.ts, yiem's own code never touches the global `Response`, `Headers` or
 *   `ReadableStream` (each loads Node's fetch or web streams on first use).
 */
import { FetchHeaders, type HeadersSource } from "./headers.js";

/** Where a body's bytes come from: chunks in order, and how to stop them early. */
export interface BodySource {
  chunks: AsyncIterator<Uint8Array>;
  /** Stops the source (closes the connection); the next `chunks.next()` may reject. */
  cancel(reason?: unknown): void;
}

/** What a `FetchResponse` body may be made of. */
export type ResponseBodyInit = string | Uint8Array | BodySource | AsyncIterable<Uint8Array> | null | undefined;

const encoder = new TextEncoder();

function isBodySource(value: unknown): value is BodySource {
  return typeof value === "object" && value !== null && "chunks" in value && "cancel" in value;
}

function sourceOf(init: Exclude<ResponseBodyInit, null | undefined>): BodySource {
  if (isBodySource(init)) return init;
  if (typeof init === "string" || init instanceof Uint8Array) {
    const bytes = typeof init === "string" ? encoder.encode(init) : init;
    let given = false;
    return {
      chunks: {
        async next() {
          if (given || bytes.length === 0) return { done: true, value: undefined };
          given = true;
          return { done: false, value: bytes };
        },
      },
      cancel() {
        given = true;
      },
    };
  }
  const chunks = init[Symbol.asyncIterator]();
  return { chunks, cancel: (reason) => void chunks.return?.(reason)?.catch(() => {}) };
}

/** A response body: one reader over its source (rules above). */
export class ResponseBody {
  readonly #source: BodySource;
  #locked = false;
  /** Read from or cancelled (fetch's "disturbed": what `bodyUsed` tells). */
  #disturbed = false;
  #done = false;

  constructor(source: BodySource) {
    this.#source = source;
  }

  get locked(): boolean {
    return this.#locked;
  }

  get disturbed(): boolean {
    return this.#disturbed;
  }

  /** Takes the body (TypeError when it was taken before). */
  #take(): void {
    if (this.#locked) throw new TypeError("the response body was already read");
    this.#locked = true;
  }

  async #next(): Promise<IteratorResult<Uint8Array, undefined>> {
    this.#disturbed = true;
    if (this.#done) return { done: true, value: undefined };
    const result = await this.#source.chunks.next();
    if (result.done) {
      this.#done = true;
      return { done: true, value: undefined };
    }
    return { done: false, value: result.value };
  }

  #cancel(reason?: unknown): void {
    this.#disturbed = true;
    if (this.#done) return;
    this.#done = true;
    this.#source.cancel(reason);
  }

  getReader(): { read(): Promise<IteratorResult<Uint8Array, undefined>>; cancel(reason?: unknown): Promise<void>; releaseLock(): void } {
    this.#take();
    return {
      read: () => this.#next(),
      cancel: async (reason) => this.#cancel(reason),
      releaseLock: () => {},
    };
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Uint8Array> {
    this.#take();
    const iterator: AsyncIterableIterator<Uint8Array> = {
      next: () => this.#next() as Promise<IteratorResult<Uint8Array>>,
      return: async () => {
        this.#cancel();
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  async cancel(reason?: unknown): Promise<void> {
    this.#locked = true;
    this.#cancel(reason);
  }

  /** Every byte of the body, in one buffer. */
  async bytes(): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    let length = 0;
    for await (const chunk of this) {
      parts.push(chunk);
      length += chunk.length;
    }
    if (parts.length === 1) return parts[0];
    const all = new Uint8Array(length);
    let at = 0;
    for (const part of parts) {
      all.set(part, at);
      at += part.length;
    }
    return all;
  }
}

/** What `FetchResponse` takes besides its body. */
export interface FetchResponseInit {
  status?: number;
  statusText?: string;
  headers?: HeadersSource | FetchHeaders | Headers;
  /** The response's URL (after redirects); "" when made by hand. */
  url?: string;
  redirected?: boolean;
}

/** A fetch `Response` (rules above). */
export class FetchResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: FetchHeaders;
  readonly url: string;
  readonly redirected: boolean;
  readonly type = "basic";
  readonly body: ResponseBody | null;

  constructor(body?: ResponseBodyInit, init: FetchResponseInit = {}) {
    this.status = init.status ?? 200;
    this.statusText = init.statusText ?? "";
    this.headers = new FetchHeaders(init.headers as HeadersSource);
    this.url = init.url ?? "";
    this.redirected = init.redirected ?? false;
    this.body = body === null || body === undefined ? null : new ResponseBody(sourceOf(body));
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  get bodyUsed(): boolean {
    return this.body?.disturbed ?? false;
  }

  async bytes(): Promise<Uint8Array> {
    return this.body ? this.body.bytes() : new Uint8Array(0);
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(await this.bytes());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  get [Symbol.toStringTag](): string {
    return "Response";
  }
}
