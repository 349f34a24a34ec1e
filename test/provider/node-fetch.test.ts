/**
 * The model client's fetch over node:http (src/provider/http/node-fetch.ts) against Node's own
 * fetch, on a loopback server: the same status, headers, bodies, redirects, failures and aborts,
 * plus what only it promises (a body read as it arrives, a kept-alive connection the server reset
 * sent again, no compression asked for).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createNetServer, type Server as NetServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { getEventListeners } from "node:events";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { CONNECT_TIMEOUT_MS, nodeFetch, usesEnvProxy } from "../../src/provider/http/node-fetch.js";
import { FetchResponse } from "../../src/provider/http/response.js";
import { createOpenAIProvider } from "../../src/provider/openai.js";

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A loopback HTTP server with `routes`; counts the connections it accepted. */
async function startServer(routes: Record<string, Handler>): Promise<{ server: Server; url: string; connections: () => number }> {
  let connections = 0;
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      const handler = routes[path];
      if (!handler) {
        res.writeHead(404).end("no route");
        return;
      }
      handler(req, res, Buffer.concat(parts).toString("utf8"));
    });
  });
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
}

let main: Awaited<ReturnType<typeof startServer>>;
let other: Awaited<ReturnType<typeof startServer>>;
/** Lets the /stream route write its last piece. */
let releaseStream: () => void = () => {};
/** Called when the connection of a /hang-body or /bad-gzip request closes. */
let onHangBodyClosed: () => void = () => {};
let onBadGzipClosed: () => void = () => {};

const echo: Handler = (req, res, body) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
};

beforeAll(async () => {
  other = await startServer({ "/echo": echo });
  main = await startServer({
    "/echo": echo,
    "/json": (_req, res) => {
      res.setHeader("content-type", "application/json; charset=utf-8");
      res.setHeader("x-multi", ["a", "b"]);
      res.setHeader("set-cookie", ["one=1", "two=2"]);
      res.writeHead(201, "Made");
      res.end('{"ok":true,"text":"ü ✓"}');
    },
    "/bom": (_req, res) => res.writeHead(200).end(Buffer.from("\ufeffhello", "utf8")),
    "/not-json": (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end("{nope"),
    "/empty": (_req, res) => res.writeHead(204).end(),
    "/gzip": (_req, res) => res.writeHead(200, { "content-encoding": "gzip" }).end(gzipSync("zipped body")),
    "/deflate": (_req, res) => res.writeHead(200, { "content-encoding": "deflate" }).end(deflateSync("deflated body")),
    "/br": (_req, res) => res.writeHead(200, { "content-encoding": "br" }).end(brotliCompressSync("brotli body")),
    "/stream": (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
      releaseStream = () => res.end("data: last\n\n");
    },
    "/cut": (req, res) => {
      res.writeHead(200, { "content-length": "1000" });
      res.write("only part of it");
      setTimeout(() => req.socket.destroy(), 20);
    },
    "/hang": () => {},
    "/zero": (_req, res) => res.writeHead(200, { "content-type": "application/json", "content-length": "0" }).end(),
    "/stream-short": (_req, res) => res.writeHead(200).end("short"),
    "/bad-gzip": (req, res) => {
      req.socket.once("close", () => onBadGzipClosed());
      res.writeHead(200, { "content-encoding": "gzip" }).write("this is not gzip at all");
    },
    "/utf8-location": (_req, res) => {
      res.writeHead(302, { location: Buffer.from("/echo?city=café", "utf8").toString("latin1") }).end();
    },
    "/put-301": (_req, res) => res.writeHead(301, { location: "/echo?from=301" }).end(),
    "/hang-gzip": (req, res) => {
      req.socket.once("close", () => onHangBodyClosed());
      res.writeHead(200, { "content-encoding": "gzip" });
      res.write(gzipSync("the whole body").subarray(0, 12));
    },
    "/hang-body": (req, res) => {
      req.socket.once("close", () => onHangBodyClosed());
      res.writeHead(200);
      res.write("started");
    },
    "/303": (_req, res) => res.writeHead(303, { location: "/echo?from=303" }).end(),
    "/302": (_req, res) => res.writeHead(302, { location: "/echo?from=302" }).end(),
    "/307": (_req, res) => res.writeHead(307, { location: "/echo?from=307" }).end(),
    "/loop": (_req, res) => res.writeHead(302, { location: "/loop" }).end(),
    "/away": (_req, res) => res.writeHead(307, { location: `${other.url}/echo` }).end(),
  });
});

afterAll(async () => {
  for (const s of [main, other]) {
    s.server.closeAllConnections();
    await new Promise<void>((resolve) => s.server.close(() => resolve()));
  }
});

/**
 * A raw HTTP server on loopback: the first request of each connection is answered "ok" with
 * keep-alive, every later one on it is handed to `later`. Records each request's method.
 */
async function startKeepAliveServer(later: (socket: Socket) => void) {
  const received: string[] = [];
  const sockets: Socket[] = [];
  const raw: NetServer = createNetServer((socket: Socket) => {
    sockets.push(socket);
    let requests = 0;
    socket.on("data", (data) => {
      const text = data.toString("latin1");
      if (!text.includes("\r\n\r\n")) return;
      received.push(text.split(" ")[0]);
      if (++requests === 1) socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok");
      else later(socket);
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(raw.address() as AddressInfo).port}/`,
    received,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => raw.close(() => resolve()));
    },
  };
}

/** What both fetches agree on for a response. */
async function summary(response: Response) {
  return {
    status: response.status,
    statusText: response.statusText,
    ok: response.ok,
    redirected: response.redirected,
    url: response.url,
    headers: [...response.headers].filter(([name]) => !["date", "connection", "keep-alive"].includes(name)),
    setCookie: response.headers.getSetCookie(),
    text: await response.text(),
  };
}

describe("nodeFetch answers as Node's fetch does", () => {
  const cases: [string, string, RequestInit?][] = [
    ["a status, its text, repeated headers and a UTF-8 body", "/json"],
    ["a BOM at the start of a body is dropped by text()", "/bom"],
    ["a 204 has no body", "/empty"],
    ["a gzip body is decoded", "/gzip"],
    ["a deflate body is decoded", "/deflate"],
    ["a br body is decoded", "/br"],
    ["303 after a POST: a GET to the new place, without the body or its type", "/303", { method: "POST", body: "payload", headers: { "content-type": "text/plain" } }],
    ["302 after a POST: a GET", "/302", { method: "POST", body: "payload" }],
    ["307 after a POST: the same POST with its body", "/307", { method: "post", body: "payload", headers: { authorization: "Bearer same-origin" } }],
    ["301 after a PUT: the same PUT", "/put-301", { method: "PUT", body: "payload" }],
    ["a Location in UTF-8", "/utf8-location"],
  ];
  for (const [name, path, init] of cases) {
    it(name, async () => {
      const theirs = await summary(await fetch(`${main.url}${path}`, init));
      const ours = await summary(await nodeFetch(`${main.url}${path}`, init));
      if (["/303", "/302", "/307", "/put-301", "/utf8-location"].includes(path)) {
        // The echoed request: both sent the same method, body and headers that matter.
        const pick = (text: string) => {
          const seen = JSON.parse(text) as { method: string; url: string; body: string; headers: Record<string, string> };
          return { method: seen.method, url: seen.url, body: seen.body, type: seen.headers["content-type"], length: seen.headers["content-length"], auth: seen.headers.authorization };
        };
        expect(pick(ours.text)).toEqual(pick(theirs.text));
        expect({ ...ours, text: "", headers: [] }).toEqual({ ...theirs, text: "", headers: [] });
        return;
      }
      expect(ours).toEqual(theirs);
    });
  }

  it("a redirect to another origin drops the authorization header (fetch does too)", async () => {
    const init = { method: "POST", body: "x", headers: { authorization: "Bearer secret", "x-keep": "1" } };
    const ours = JSON.parse(await (await nodeFetch(`${main.url}/away`, init)).text()) as { headers: Record<string, string> };
    const theirs = JSON.parse(await (await fetch(`${main.url}/away`, init)).text()) as { headers: Record<string, string> };
    expect(ours.headers.authorization).toBeUndefined();
    expect(theirs.headers.authorization).toBeUndefined();
    const more = { method: "POST", body: "x", headers: { cookie: "a=1", "proxy-authorization": "Basic eA==" } };
    const seen = JSON.parse(await (await nodeFetch(`${main.url}/away`, more)).text()) as { headers: Record<string, string> };
    expect([seen.headers.cookie, seen.headers["proxy-authorization"]]).toEqual([undefined, undefined]);
    expect(ours.headers["x-keep"]).toBe("1");
  });

  it("more than 20 redirects: TypeError, as fetch", async () => {
    await expect(fetch(`${main.url}/loop`)).rejects.toThrow(TypeError);
    await expect(nodeFetch(`${main.url}/loop`)).rejects.toThrow(TypeError);
  });

  it("redirect: manual returns the redirect itself; error rejects", async () => {
    const manual = await nodeFetch(`${main.url}/303`, { redirect: "manual" });
    expect(manual.status).toBe(303);
    expect(manual.headers.get("location")).toBe("/echo?from=303");
    await expect(nodeFetch(`${main.url}/303`, { redirect: "error" })).rejects.toThrow(TypeError);
  });

  it("sends a string body with fetch's content type, bytes and URLSearchParams as fetch does", async () => {
    for (const body of ["text ✓", new TextEncoder().encode("bytes"), new URLSearchParams({ a: "1", b: "two words" })]) {
      const ours = JSON.parse(await (await nodeFetch(`${main.url}/echo`, { method: "POST", body })).text());
      const theirs = JSON.parse(await (await fetch(`${main.url}/echo`, { method: "POST", body })).text());
      expect({ body: ours.body, type: ours.headers["content-type"], length: ours.headers["content-length"] }).toEqual({
        body: theirs.body,
        type: theirs.headers["content-type"],
        length: theirs.headers["content-length"],
      });
    }
  });

  it("asks for no compression unless told to", async () => {
    const seen = JSON.parse(await (await nodeFetch(`${main.url}/echo`)).text());
    expect(seen.headers["accept-encoding"]).toBeUndefined();
    expect(seen.headers.accept).toBe("*/*");
    const told = JSON.parse(await (await nodeFetch(`${main.url}/echo`, { headers: { "accept-encoding": "gzip" } })).text());
    expect(told.headers["accept-encoding"]).toBe("gzip");
  });

  it("a GET with a body is a TypeError, as in fetch", async () => {
    await expect(fetch(`${main.url}/echo`, { body: "x" })).rejects.toThrow(TypeError);
    await expect(nodeFetch(`${main.url}/echo`, { body: "x" })).rejects.toThrow(TypeError);
  });

  it("json() of a body that is not JSON throws SyntaxError; a body read twice is a TypeError", async () => {
    const response = await nodeFetch(`${main.url}/not-json`);
    await expect(response.json()).rejects.toThrow(SyntaxError);
    expect(response.bodyUsed).toBe(true);
    const fresh = await nodeFetch(`${main.url}/json`);
    const reader = fresh.body!.getReader();
    expect(fresh.bodyUsed).toBe(false);
    await reader.read();
    expect(fresh.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
  });
});

describe("nodeFetch failures and aborts", () => {
  it("a refused connection: TypeError 'fetch failed' with Node's error as cause (ECONNREFUSED)", async () => {
    const closed = createNetServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const failure = await nodeFetch(`http://127.0.0.1:${port}/`).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as Error).message).toBe("fetch failed");
    expect(((failure as Error).cause as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
  });

  it("a body the server cuts off: reading it rejects (so does fetch's)", async () => {
    await expect((await fetch(`${main.url}/cut`)).text()).rejects.toThrow();
    await expect((await nodeFetch(`${main.url}/cut`)).text()).rejects.toThrow();
  });

  it("an abort before the answer rejects with the signal's reason; with none, an AbortError", async () => {
    const reason = new Error("stop now");
    const controller = new AbortController();
    const pending = nodeFetch(`${main.url}/hang`, { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 30);
    await expect(pending).rejects.toBe(reason);
    const plain = new AbortController();
    const second = nodeFetch(`${main.url}/hang`, { signal: plain.signal });
    setTimeout(() => plain.abort(), 30);
    await expect(second).rejects.toMatchObject({ name: "AbortError" });
    await expect(nodeFetch(`${main.url}/echo`, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: "AbortError" });
  });

  it("an abort while the body is read rejects the read with the signal's reason", async () => {
    const controller = new AbortController();
    const response = await nodeFetch(`${main.url}/hang-body`, { signal: controller.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("started");
    const reason = new Error("aborted mid-body");
    setTimeout(() => controller.abort(reason), 20);
    await expect(reader.read()).rejects.toBe(reason);
  });

  it("an https connection whose TLS handshake never ends fails after CONNECT_TIMEOUT_MS (undici's default, 10 s)", async () => {
    expect(CONNECT_TIMEOUT_MS).toBe(10_000);
    const sockets: Socket[] = [];
    let connected: () => void = () => {};
    const accepted = new Promise<void>((resolve) => (connected = resolve));
    // Accepts TCP and never speaks TLS.
    const mute = createNetServer((socket) => {
      sockets.push(socket);
      connected();
    });
    await new Promise<void>((resolve) => mute.listen(0, "127.0.0.1", resolve));
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const pending = nodeFetch(`https://127.0.0.1:${(mute.address() as AddressInfo).port}/`).catch((error: unknown) => error);
      await accepted;
      await new Promise((resolve) => setImmediate(resolve));
      vi.advanceTimersByTime(CONNECT_TIMEOUT_MS - 1);
      let settled = false;
      void pending.then(() => (settled = true));
      await new Promise((resolve) => setImmediate(resolve));
      expect(settled).toBe(false);
      vi.advanceTimersByTime(1);
      const failure = await pending;
      expect(failure).toBeInstanceOf(TypeError);
      expect(String((failure as Error).cause)).toMatch(/timed out after 10000 ms/);
    } finally {
      vi.useRealTimers();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => mute.close(() => resolve()));
    }
  });

  it("a URL with credentials is a TypeError, as in fetch", async () => {
    const withCredentials = main.url.replace("http://", "http://user:secret@");
    await expect(fetch(`${withCredentials}/echo`)).rejects.toThrow(TypeError);
    await expect(nodeFetch(`${withCredentials}/echo`)).rejects.toThrow(TypeError);
  });

  it("a non-streamed body the server cuts off fails with TypeError('terminated'), the kind the provider retries", async () => {
    const failure = await (await nodeFetch(`${main.url}/cut`)).text().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as Error).message).toBe("terminated");
  });
});

describe("nodeFetch connections and streaming", () => {
  it("a streamed body arrives piece by piece, before the server ended it", async () => {
    const response = await nodeFetch(`${main.url}/stream`);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: first\n\n");
    releaseStream();
    const rest: string[] = [];
    for (let piece = await reader.read(); !piece.done; piece = await reader.read()) rest.push(new TextDecoder().decode(piece.value));
    expect(rest.join("")).toBe("data: last\n\n");
  });

  it("keeps a connection alive between requests", async () => {
    const before = other.connections();
    for (let i = 0; i < 3; i++) expect(JSON.parse(await (await nodeFetch(`${other.url}/echo`)).text()).method).toBe("GET");
    expect(other.connections() - before).toBeLessThanOrEqual(1);
  });

  it("a POST whose kept-alive connection the server resets is never sent again: it fails, as in fetch (the provider retries it, visibly)", async () => {
    // The second request on the connection is read whole, then the connection is reset.
    const raw = await startKeepAliveServer((socket) => socket.resetAndDestroy());
    try {
      expect(await (await nodeFetch(raw.url)).text()).toBe("ok");
      const failure = await nodeFetch(raw.url, { method: "POST", body: "once" }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(TypeError);
      expect(((failure as Error).cause as NodeJS.ErrnoException).code).toBe("ECONNRESET");
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(raw.received).toEqual(["GET", "POST"]);
    } finally {
      await raw.close();
    }
  });

  it("a reset in the middle of a body on a kept-alive connection: the read fails with TypeError('terminated'), the POST is not sent again, nothing is left unhandled", async () => {
    const raw = await startKeepAliveServer((socket) => {
      socket.write("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npart of it");
      setTimeout(() => socket.resetAndDestroy(), 20);
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      expect(await (await nodeFetch(raw.url)).text()).toBe("ok");
      const response = await nodeFetch(raw.url, { method: "POST", body: "once" });
      const failure = await response.text().catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(TypeError);
      expect((failure as Error).message).toBe("terminated");
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(raw.received).toEqual(["GET", "POST"]);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      await raw.close();
    }
  });

  it("an empty body (content-length: 0) that is never read gives its connection back at once", async () => {
    const before = main.connections();
    for (let i = 0; i < 5; i++) expect((await nodeFetch(`${main.url}/zero`)).status).toBe(200);
    expect(main.connections() - before).toBeLessThanOrEqual(1);
  });

  it("a body never read whose connection the server closes throws nothing (a later read fails with TypeError), also a compressed one", async () => {
    for (const path of ["/hang-body", "/hang-gzip"]) {
      const closed = new Promise<void>((resolve) => (onHangBodyClosed = resolve));
      const response = await nodeFetch(`${main.url}${path}`);
      main.server.closeAllConnections();
      await closed;
      await new Promise((resolve) => setTimeout(resolve, 50));
      await expect(response.text()).rejects.toThrow(TypeError);
    }
  });

  it("a cancelled body closes its connection", async () => {
    const closed = new Promise<void>((resolve) => (onHangBodyClosed = resolve));
    const response = await nodeFetch(`${main.url}/hang-body`);
    await response.body!.cancel();
    await closed;
    expect(response.bodyUsed).toBe(true);
  });

  it("a body that cannot be decoded: the read fails with TypeError('terminated') and the connection is closed", async () => {
    const closed = new Promise<void>((resolve) => (onBadGzipClosed = resolve));
    const failure = await (await nodeFetch(`${main.url}/bad-gzip`)).text().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as Error).message).toBe("terminated");
    await closed;
  });

  it("no abort listener is left on a signal shared by many requests", async () => {
    const controller = new AbortController();
    for (let i = 0; i < 30; i++) await (await nodeFetch(`${main.url}/json`, { signal: controller.signal })).text();
    for (let i = 0; i < 5; i++) await (await nodeFetch(`${main.url}/stream-short`, { signal: controller.signal })).body!.cancel();
    await nodeFetch(`${main.url}/cut`, { signal: controller.signal }).then((r) => r.text()).catch(() => {});
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("what it does not take goes to Node's fetch: a Request, a stream body", async () => {
    const viaRequest = await nodeFetch(new Request(`${main.url}/echo`, { method: "POST", body: "in a Request" }));
    expect(viaRequest).toBeInstanceOf(Response);
    expect(JSON.parse(await viaRequest.text()).body).toBe("in a Request");
    const stream = new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode("streamed")), c.close()) });
    const viaStream = await nodeFetch(`${main.url}/echo`, { method: "POST", body: stream, duplex: "half" } as RequestInit);
    expect(JSON.parse(await viaStream.text()).body).toBe("streamed");
  });

  it("a process told to use the proxy variables (NODE_USE_ENV_PROXY, --use-env-proxy) sends every request through Node's fetch", async () => {
    expect(usesEnvProxy({}, [])).toBe(false);
    expect(usesEnvProxy({ NODE_USE_ENV_PROXY: "0" }, [])).toBe(false);
    expect(usesEnvProxy({ NODE_USE_ENV_PROXY: "1" }, [])).toBe(true);
    expect(usesEnvProxy({}, ["--use-env-proxy"])).toBe(true);
    expect(usesEnvProxy({ NODE_OPTIONS: "--max-old-space-size=100 --use-env-proxy" }, [])).toBe(true);
    const before = process.env.NODE_USE_ENV_PROXY;
    process.env.NODE_USE_ENV_PROXY = "1";
    try {
      const response = await nodeFetch(`${main.url}/json`);
      expect(response).toBeInstanceOf(Response);
      await response.text();
    } finally {
      if (before === undefined) delete process.env.NODE_USE_ENV_PROXY;
      else process.env.NODE_USE_ENV_PROXY = before;
    }
  });

  it("its responses are FetchResponse, with iterable bodies", async () => {
    const response = await nodeFetch(`${main.url}/json`);
    expect(response).toBeInstanceOf(FetchResponse);
    const parts: Uint8Array[] = [];
    for await (const part of response.body as unknown as AsyncIterable<Uint8Array>) parts.push(part);
    expect(Buffer.concat(parts).toString("utf8")).toBe('{"ok":true,"text":"ü ✓"}');
  });
});

describe("the provider over nodeFetch", () => {
  it("a non-streamed answer cut off in its body is retried, and the retry's answer returned", async () => {
    const answer = JSON.stringify({ id: "c", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "the whole answer" }, finish_reason: "stop" }] });
    let attempts = 0;
    const cutting = await startServer({
      "/v1/chat/completions": (req, res) => {
        attempts++;
        if (attempts > 1) {
          res.writeHead(200, { "content-type": "application/json" }).end(answer);
          return;
        }
        res.writeHead(200, { "content-type": "application/json", "content-length": String(answer.length) });
        res.write(answer.slice(0, 25));
        setTimeout(() => req.socket.destroy(), 20);
      },
    });
    try {
      const provider = createOpenAIProvider({ model: "m", baseURL: `${cutting.url}/v1`, apiKey: "sk-test-key", stream: false, maxRetries: 2 });
      const retries: string[] = [];
      const response = await provider.complete({
        messages: [{ role: "user", content: "hi" }],
        tools: [],
        signal: new AbortController().signal,
        onRetry: (info) => retries.push(JSON.stringify(info)),
      });
      expect(response.message.content).toBe("the whole answer");
      expect(attempts).toBe(2);
      expect(retries).toHaveLength(1);
    } finally {
      cutting.server.closeAllConnections();
      await new Promise<void>((resolve) => cutting.server.close(() => resolve()));
    }
  });
});
