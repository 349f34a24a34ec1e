/**
 * The model client's `fetch`: the Fetch standard's request and response, over Node's own
 * `node:http` / `node:https` (docs/architecture.md, "The model client's HTTP"). Node 20's global
 * `fetch` loads undici and ~40 built-in modules on first use (~50 ms of every `yiem run`,
 * docs/performance.md); this needs `node:http` only (and `node:https`, `node:zlib` when used).
 * Rules:
 * - it takes a string or URL of `http:` or `https:` and a body of a string, bytes, an
 *   ArrayBuffer or URLSearchParams; anything else (a `Request`, a stream or form body, another
 *   scheme) goes to the global `fetch` unchanged, so nothing is refused that fetch takes. So does
 *   every request of a process that asked Node to use the proxy variables (`NODE_USE_ENV_PROXY`,
 *   `--use-env-proxy`: newer Node versions honour them in their `fetch`);
 * - as fetch: a network failure rejects with `TypeError("fetch failed")` whose `cause` is Node's
 *   error (`code` ECONNREFUSED, ECONNRESET, …), and a body that breaks off (cut, reset, not
 *   decodable) rejects its read with `TypeError("terminated")` with the cause; an aborted signal
 *   rejects with its reason (an `AbortError` DOMException when it has none), before the response
 *   and while its body is read; a connection that closes without an answer (a 101 Node takes the
 *   socket for) fails too; a URL with credentials (`user:pass@`) and the methods CONNECT, TRACE
 *   and TRACK are a TypeError; a failed
 *   request is never sent again here (the provider's retries are the only ones, and visible);
 *   redirects are followed (at most 20; 303, and 301/302 of a POST, become a GET without
 *   body; a redirect to another origin drops `authorization`, `proxy-authorization` and
 *   `cookie`, as fetch does, and also `api-key` and `x-api-key`, the key headers of Azure-style
 *   and Anthropic-style APIs (a spec's `model.headers`), which fetch would send on);
 *   `redirect: "manual"` returns the redirect, `"error"` rejects;
 * - a connection must be made (for https: its TLS handshake done) within CONNECT_TIMEOUT_MS
 *   (undici's default), else it fails with an error that says it timed out; nothing else is timed here: the caller's signal is the limit
 *   (the provider's inactivity timer, docs/reliability.md);
 * - it asks for no compression (no `accept-encoding` unless the caller sets one) and decodes a
 *   gzip, deflate or br body a server sends anyway;
 * - connections are kept alive per protocol (an idle one never keeps the process alive); a
 *   body that ended or broke off, was cancelled, or is empty (`content-length: 0`, which the SDK
 *   never reads) gives its connection back at once;
 * - request and response headers are `FetchHeaders` (./headers.ts), the response a
 *   `FetchResponse` (./response.ts); the global `Headers` and `Response` are never touched.
 */
import type { Agent as HttpAgent, ClientRequest, IncomingMessage, RequestOptions } from "node:http";
import { FetchHeaders, type HeadersSource } from "./headers.js";
import { FetchResponse, type BodySource } from "./response.js";

/** How long a connection may take to be made (undici's default connect timeout). */
export const CONNECT_TIMEOUT_MS = 10_000;
const MAX_REDIRECTS = 20;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
/** The methods fetch upper-cases (PATCH is sent as given, as fetch does). */
const STANDARD_METHODS = new Set(["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"]);
/** The methods fetch refuses. */
const FORBIDDEN_METHODS = new Set(["CONNECT", "TRACE", "TRACK"]);
/** Headers about a request body, dropped with the body on a redirect that becomes a GET. */
const BODY_HEADERS = ["content-encoding", "content-language", "content-location", "content-type", "content-length"];
/** Headers dropped on a redirect to another origin: fetch's three, and the API key headers other than `authorization` (module rules). */
const CREDENTIAL_HEADERS = ["authorization", "proxy-authorization", "cookie", "api-key", "x-api-key"];

type Protocol = "http:" | "https:";

/** Whether Node was asked to send requests through `HTTP_PROXY`/`HTTPS_PROXY` (its `fetch` does, where supported). */
export function usesEnvProxy(env: NodeJS.ProcessEnv = process.env, execArgv: string[] = process.execArgv): boolean {
  const flag = env.NODE_USE_ENV_PROXY;
  return (flag !== undefined && flag !== "" && flag !== "0") || execArgv.includes("--use-env-proxy") || /(?:^|\s)--use-env-proxy(?:\s|$)/.test(env.NODE_OPTIONS ?? "");
}
const agents = new Map<Protocol, HttpAgent>();

/** `node:http` or `node:https`, loaded on first use. */
function transport(protocol: Protocol): typeof import("node:http") {
  return process.getBuiltinModule(protocol === "https:" ? "node:https" : "node:http") as typeof import("node:http");
}

function agentFor(protocol: Protocol): HttpAgent {
  let agent = agents.get(protocol);
  if (!agent) {
    agent = new (transport(protocol).Agent)({ keepAlive: true });
    agents.set(protocol, agent);
  }
  return agent;
}

/** The request body as bytes, plus the content type fetch gives it; undefined: a body this fetch does not take. */
function bodyBytes(body: unknown): { bytes: Uint8Array | null; type?: string } | undefined {
  if (body === undefined || body === null) return { bytes: null };
  if (typeof body === "string") return { bytes: Buffer.from(body, "utf8"), type: "text/plain;charset=UTF-8" };
  if (ArrayBuffer.isView(body)) return { bytes: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) };
  if (body instanceof ArrayBuffer) return { bytes: new Uint8Array(body) };
  if (body instanceof URLSearchParams) return { bytes: Buffer.from(body.toString(), "utf8"), type: "application/x-www-form-urlencoded;charset=UTF-8" };
  return undefined;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

function fetchFailed(cause: unknown): TypeError {
  return new TypeError("fetch failed", { cause });
}

/** One request and its redirects' state. */
interface Exchange {
  url: URL;
  method: string;
  headers: FetchHeaders;
  body: Uint8Array | null;
  signal: AbortSignal | undefined;
  redirect: "follow" | "manual" | "error";
  redirects: number;
}

/** The model client's `fetch` (rules above). */
export const nodeFetch: typeof globalThis.fetch = async (input, init) => {
  const target = typeof input === "string" ? input : input instanceof URL ? input.href : undefined;
  const body = bodyBytes(init?.body);
  const url = target === undefined ? undefined : URL.canParse(target) ? new URL(target) : undefined;
  if (url === undefined || body === undefined || (url.protocol !== "http:" && url.protocol !== "https:") || usesEnvProxy()) return globalThis.fetch(input, init);
  if (url.username || url.password) throw new TypeError("a request URL may not hold credentials (user:password@)");
  let method = init?.method ?? "GET";
  if (STANDARD_METHODS.has(method.toUpperCase())) method = method.toUpperCase();
  if (FORBIDDEN_METHODS.has(method.toUpperCase())) throw new TypeError(`fetch does not send ${method} requests`);
  if ((method === "GET" || method === "HEAD") && body.bytes !== null) throw new TypeError(`a ${method} request cannot have a body`);
  const headers = new FetchHeaders(init?.headers as HeadersSource);
  if (!headers.has("accept")) headers.set("accept", "*/*");
  if (body.type && !headers.has("content-type")) headers.set("content-type", body.type);
  const signal = init?.signal ?? undefined;
  if (signal?.aborted) throw abortReason(signal);
  const response = await send({ url, method, headers, body: body.bytes, signal, redirect: (init?.redirect ?? "follow") as Exchange["redirect"], redirects: 0 });
  return response as unknown as Response;
};

/** Sends `exchange`, following redirects as fetch does. */
async function send(exchange: Exchange): Promise<FetchResponse> {
  for (;;) {
    const { message, request } = await exchangeOnce(exchange);
    const status = message.statusCode ?? 0;
    const location = locationOf(message);
    if (!REDIRECT_STATUSES.has(status) || location === undefined || exchange.redirect === "manual") return responseOf(exchange, message, request);
    // A redirect's body already here is drained, so its connection is kept; one still coming is cut.
    if (message.complete) message.resume();
    else request.destroy();
    if (exchange.redirect === "error") throw fetchFailed(new Error(`the server redirected to ${location} and redirects are refused`));
    if (++exchange.redirects > MAX_REDIRECTS) throw fetchFailed(new Error("more than 20 redirects"));
    const next = URL.canParse(location, exchange.url.href) ? new URL(location, exchange.url) : undefined;
    if (!next || (next.protocol !== "http:" && next.protocol !== "https:")) throw fetchFailed(new Error(`the server redirected to an unusable URL: ${location}`));
    if ((status === 303 && exchange.method !== "HEAD") || ((status === 301 || status === 302) && exchange.method === "POST")) {
      exchange.method = "GET";
      exchange.body = null;
      for (const name of BODY_HEADERS) exchange.headers.delete(name);
    }
    if (next.origin !== exchange.url.origin) for (const name of CREDENTIAL_HEADERS) exchange.headers.delete(name);
    exchange.url = next;
  }
}

/** One HTTP request: resolves with the response head, rejects as fetch does (rules above). */
function exchangeOnce(exchange: Exchange): Promise<{ message: IncomingMessage; request: ClientRequest }> {
  const { url, signal } = exchange;
  const protocol = url.protocol as Protocol;
  const headers: Record<string, string> = {};
  for (const [name, value] of exchange.headers) headers[name] = value;
  if (exchange.body !== null) headers["content-length"] = String(exchange.body.length);
  const options: RequestOptions = {
    protocol,
    hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port || undefined,
    path: `${url.pathname}${url.search}`,
    method: exchange.method,
    headers,
    agent: agentFor(protocol),
  };
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const request = transport(protocol).request(options);
    let connectTimer: NodeJS.Timeout | undefined;
    let settled = false;
    const settle = () => {
      settled = true;
      clearTimeout(connectTimer);
      signal?.removeEventListener("abort", onAbort);
    };
    const fail = (reason: unknown) => {
      if (settled) return;
      settle();
      reject(reason);
    };
    // Rejected here, not through the request's 'error' (a request Node already destroyed emits none).
    const onAbort = () => {
      const reason = abortReason(signal!);
      fail(reason);
      request.destroy(reason as Error);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    request.once("socket", (socket) => {
      if (!socket.connecting) return;
      connectTimer = setTimeout(() => {
        const error = Object.assign(new Error(`connect timed out after ${CONNECT_TIMEOUT_MS} ms (${url.host})`), { code: "ETIMEDOUT" });
        request.destroy(error);
      }, CONNECT_TIMEOUT_MS);
      // A TLS socket is connected once its handshake is done.
      socket.once(protocol === "https:" ? "secureConnect" : "connect", () => clearTimeout(connectTimer));
    });
    request.once("response", (message) => {
      if (settled) return;
      settle();
      resolve({ message, request });
    });
    // After the response head, a failure is the body's (bodySource reports it to its reader).
    request.on("error", (error) => fail(signal?.aborted ? abortReason(signal) : fetchFailed(error)));
    // Closed with no answer and no error: a 101 or a CONNECT reply Node took the socket away for.
    request.once("close", () => fail(fetchFailed(new Error("the connection closed without an HTTP response"))));
    request.end(exchange.body ?? undefined);
  });
}

/** The `location` header of `message`, its bytes read as UTF-8 (Node hands header bytes over as Latin-1); undefined when there is none. */
function locationOf(message: IncomingMessage): string | undefined {
  const location = message.headers.location;
  if (location === undefined || !/[\u0080-\u00ff]/.test(location)) return location;
  return Buffer.from(location, "latin1").toString("utf8");
}

/** The fetch response of `message`: its headers, and its body read as it arrives (rules above). */
function responseOf(exchange: Exchange, message: IncomingMessage, request: ClientRequest): FetchResponse {
  const headers = new FetchHeaders();
  const raw = message.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i], raw[i + 1]);
    } catch {
      // a header fetch could not hold either (undici drops it too)
    }
  }
  const status = message.statusCode ?? 0;
  const init = { status, statusText: message.statusMessage ?? "", headers, url: exchange.url.href, redirected: exchange.redirects > 0 };
  if (exchange.method === "HEAD" || NULL_BODY_STATUSES.has(status)) {
    message.resume();
    return new FetchResponse(null, init);
  }
  if (headers.get("content-length") === "0") {
    // Nothing to read: the connection is given back now, not when (if ever) the body is read.
    message.resume();
    return new FetchResponse(new Uint8Array(0), init);
  }
  return new FetchResponse(bodySource(message, request, headers.get("content-encoding"), exchange.signal), init);
}

/** The decoded bytes of `message` as a body source; an abort of `signal` ends it with the signal's reason. */
function bodySource(message: IncomingMessage, request: ClientRequest, encoding: string | null, signal: AbortSignal | undefined): BodySource {
  const decoder = decoderFor(encoding);
  const stream: NodeJS.ReadableStream = decoder ? message.pipe(decoder) : message;
  // A failure reaches the reader through the iterator; a body nobody reads must not throw it.
  message.on("error", () => {});
  decoder?.on("error", () => {});
  if (decoder) message.once("error", (error) => decoder.destroy(error));
  // A message cut by the server: Node reports `aborted` and ends the message without an error.
  message.once("aborted", () => (decoder ?? message).destroy(Object.assign(new Error("the server closed the connection before the body ended"), { code: "ECONNRESET" })));
  const chunks = (stream as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  const destroy = (reason?: unknown) => {
    request.destroy();
    message.destroy(reason as Error | undefined);
    decoder?.destroy(reason as Error | undefined);
  };
  const onAbort = () => destroy(signal ? abortReason(signal) : undefined);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  const stop = () => signal?.removeEventListener("abort", onAbort);
  return {
    chunks: {
      async next() {
        try {
          const result = await chunks.next();
          if (result.done) {
            stop();
            // A decoder that ended before its message did: the rest is never read, so the connection goes.
            if (!message.complete) destroy();
          }
          return result;
        } catch (error) {
          stop();
          destroy();
          throw signal?.aborted ? abortReason(signal) : new TypeError("terminated", { cause: error });
        }
      },
    },
    cancel(reason) {
      stop();
      destroy();
      void chunks.return?.(reason).catch(() => {});
    },
  };
}

/** A zlib stream for a body's content coding; null for identity or a coding it does not know (the bytes are passed on as sent). */
function decoderFor(encoding: string | null): import("node:zlib").Gunzip | import("node:zlib").Inflate | import("node:zlib").BrotliDecompress | null {
  const coding = encoding?.trim().toLowerCase();
  if (coding !== "gzip" && coding !== "x-gzip" && coding !== "deflate" && coding !== "br") return null;
  const zlib = process.getBuiltinModule("node:zlib") as typeof import("node:zlib");
  const flush = zlib.constants.Z_SYNC_FLUSH;
  if (coding === "br") return zlib.createBrotliDecompress({ flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
  if (coding === "deflate") return zlib.createInflate({ flush, finishFlush: flush });
  return zlib.createGunzip({ flush, finishFlush: flush });
}
