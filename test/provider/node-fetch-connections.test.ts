/**
 * The model client's fetch over node:http (src/provider/http/node-fetch.ts): streamed bodies,
 * kept-alive connections and what gives them back, resets, aborts on a shared signal, what goes to
 * Node's fetch instead, and the provider over it. Against Node's fetch: node-fetch.test.ts.
 */
import { getEventListeners } from "node:events";
import { createServer as createNetServer, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFetchTestServers } from "../support/fetch-servers.js";
import { nodeFetch, usesEnvProxy } from "../../src/provider/http/node-fetch.js";
import { FetchResponse } from "../../src/provider/http/response.js";
import { createOpenAIProvider } from "../../src/provider/openai.js";
import { startKeepAliveServer, startServer } from "../support/fetch-servers.js";

let servers: Awaited<ReturnType<typeof startFetchTestServers>>;
let main: typeof servers.main;
let other: typeof servers.other;
beforeAll(async () => {
  servers = await startFetchTestServers();
  ({ main, other } = servers);
});
afterAll(() => servers.close());

describe("nodeFetch connections and streaming", () => {
  it("a streamed body arrives piece by piece, before the server ended it", async () => {
    const response = await nodeFetch(`${main.url}/stream`);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: first\n\n");
    servers.hooks.releaseStream();
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
      const closed = new Promise<void>((resolve) => (servers.hooks.onHangBodyClosed = resolve));
      const response = await nodeFetch(`${main.url}${path}`);
      main.server.closeAllConnections();
      await closed;
      await new Promise((resolve) => setTimeout(resolve, 50));
      await expect(response.text()).rejects.toThrow(TypeError);
    }
  });

  it("a cancelled body closes its connection", async () => {
    const closed = new Promise<void>((resolve) => (servers.hooks.onHangBodyClosed = resolve));
    const response = await nodeFetch(`${main.url}/hang-body`);
    await response.body!.cancel();
    await closed;
    expect(response.bodyUsed).toBe(true);
  });

  it("a body that cannot be decoded: the read fails with TypeError('terminated') and the connection is closed", async () => {
    const closed = new Promise<void>((resolve) => (servers.hooks.onBadGzipClosed = resolve));
    const failure = await (await nodeFetch(`${main.url}/bad-gzip`)).text().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as Error).message).toBe("terminated");
    await closed;
  });

  it("a 101 answer to a plain request fails with 'fetch failed' (Node closes the connection without a response event)", async () => {
    const sockets: Socket[] = [];
    const raw = createNetServer((socket) => {
      sockets.push(socket);
      socket.once("data", () => socket.write("HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: other\r\n\r\n"));
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
    try {
      const failure = await nodeFetch(`http://127.0.0.1:${(raw.address() as AddressInfo).port}/`, { method: "POST", body: "x" }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(TypeError);
      expect((failure as Error).message).toBe("fetch failed");
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => raw.close(() => resolve()));
    }
    await expect(nodeFetch(`${main.url}/echo`, { method: "CONNECT" })).rejects.toThrow(TypeError);
  });

  it("a redirect whose body is still coming has its connection closed, not kept waiting", async () => {
    const closed = new Promise<void>((resolve) => (servers.hooks.onOtherClosed = resolve));
    const response = await nodeFetch(`${main.url}/redirect-stall`);
    expect(response.status).toBe(200);
    await response.text();
    await closed;
  });

  it("a compressed body that ends before its message: the answer is read, the rest's connection closed", async () => {
    const closed = new Promise<void>((resolve) => (servers.hooks.onOtherClosed = resolve));
    expect(await (await nodeFetch(`${main.url}/deflate-trailing`)).text()).toBe("hello");
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
