/**
 * Loopback servers for the tests of the model client's fetch (src/provider/http/node-fetch.ts):
 * `startFetchTestServers()` gives a server with every route those tests use and a second one
 * (another origin), `startKeepAliveServer` a raw server for kept-alive connection faults.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from "node:net";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A loopback HTTP server with `routes`; counts the connections it accepted. */
export async function startServer(routes: Record<string, Handler>): Promise<{ server: Server; url: string; connections: () => number }> {
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

/**
 * A raw HTTP server on loopback: the first request of each connection is answered "ok" with
 * keep-alive, every later one on it is handed to `later`. Records each request's method.
 */
export async function startKeepAliveServer(later: (socket: Socket) => void) {
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

/** Answers with the request it got: method, URL, headers and body. */
const echo: Handler = (req, res, body) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
};

/** Called by routes: the test sets them before the request (see each route). */
export interface RouteHooks {
  /** Lets the /stream route write its last piece (the route sets it). */
  releaseStream: () => void;
  /** Called when the connection of a /hang-body or /hang-gzip request closes. */
  onHangBodyClosed: () => void;
  /** Called when the connection of a /bad-gzip request closes. */
  onBadGzipClosed: () => void;
  /** Called when the connection of a /redirect-stall or /deflate-trailing request closes. */
  onOtherClosed: () => void;
}

/** The main server with every route, the other origin, the hooks their routes call, and a close for both. */
export async function startFetchTestServers() {
  const hooks: RouteHooks = { releaseStream: () => {}, onHangBodyClosed: () => {}, onBadGzipClosed: () => {}, onOtherClosed: () => {} };
  const other = await startServer({ "/echo": echo });
  const main = await startServer({
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
      hooks.releaseStream = () => res.end("data: last\n\n");
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
      req.socket.once("close", () => hooks.onBadGzipClosed());
      res.writeHead(200, { "content-encoding": "gzip" }).write("this is not gzip at all");
    },
    "/utf8-location": (_req, res) => {
      res.writeHead(302, { location: Buffer.from("/echo?city=café", "utf8").toString("latin1") }).end();
    },
    "/put-301": (_req, res) => res.writeHead(301, { location: "/echo?from=301" }).end(),
    "/hang-gzip": (req, res) => {
      req.socket.once("close", () => hooks.onHangBodyClosed());
      res.writeHead(200, { "content-encoding": "gzip" });
      res.write(gzipSync("the whole body").subarray(0, 12));
    },
    "/hang-body": (req, res) => {
      req.socket.once("close", () => hooks.onHangBodyClosed());
      res.writeHead(200);
      res.write("started");
    },
    "/redirect-stall": (req, res) => {
      req.socket.once("close", () => hooks.onOtherClosed());
      res.writeHead(302, { location: "/echo", "content-length": "100" });
      res.write("a body that never ends");
    },
    "/deflate-trailing": (req, res) => {
      req.socket.once("close", () => hooks.onOtherClosed());
      const body = Buffer.concat([deflateSync("hello"), Buffer.from("trailing bytes past the end of the deflate stream")]);
      res.writeHead(200, { "content-encoding": "deflate", "content-length": String(body.length) });
      res.write(body.subarray(0, body.length - 5));
    },
    "/303": (_req, res) => res.writeHead(303, { location: "/echo?from=303" }).end(),
    "/302": (_req, res) => res.writeHead(302, { location: "/echo?from=302" }).end(),
    "/307": (_req, res) => res.writeHead(307, { location: "/echo?from=307" }).end(),
    "/loop": (_req, res) => res.writeHead(302, { location: "/loop" }).end(),
    "/away": (_req, res) => res.writeHead(307, { location: `${other.url}/echo` }).end(),
  });

  return {
    main,
    other,
    hooks,
    async close() {
      for (const s of [main, other]) {
        s.server.closeAllConnections();
        await new Promise<void>((resolve) => s.server.close(() => resolve()));
      }
    },
  };
}
