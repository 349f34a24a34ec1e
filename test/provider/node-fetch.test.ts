/**
 * The model client's fetch over node:http (src/provider/http/node-fetch.ts) against Node's own
 * fetch, on a loopback server (test/support/fetch-servers.ts): the same status, headers, bodies,
 * redirects, failures and aborts. Connections, streaming and the provider over it:
 * node-fetch-connections.test.ts.
 */
import { createServer as createNetServer, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFetchTestServers } from "../support/fetch-servers.js";
import { CONNECT_TIMEOUT_MS, nodeFetch } from "../../src/provider/http/node-fetch.js";

let servers: Awaited<ReturnType<typeof startFetchTestServers>>;
let main: typeof servers.main;
beforeAll(async () => {
  servers = await startFetchTestServers();
  main = servers.main;
});
afterAll(() => servers.close());

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

  it("a redirect to another origin also drops api-key and x-api-key (fetch sends them on); one to the same origin keeps them", async () => {
    const init = { method: "POST", body: "x", headers: { "api-key": "azure-secret", "x-api-key": "other-secret", "x-keep": "1" } };
    const away = JSON.parse(await (await nodeFetch(`${main.url}/away`, init)).text()) as { headers: Record<string, string> };
    expect([away.headers["api-key"], away.headers["x-api-key"], away.headers["x-keep"]]).toEqual([undefined, undefined, "1"]);
    const theirs = JSON.parse(await (await fetch(`${main.url}/away`, init)).text()) as { headers: Record<string, string> };
    expect(theirs.headers["api-key"]).toBe("azure-secret");
    const here = JSON.parse(await (await nodeFetch(`${main.url}/307`, init)).text()) as { headers: Record<string, string> };
    expect([here.headers["api-key"], here.headers["x-api-key"]]).toEqual(["azure-secret", "other-secret"]);
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

