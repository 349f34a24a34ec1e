/**
 * Streamable HTTP for `yiem mcp serve --http [HOST:]PORT`: a node:http server in front of the
 * SDK's web-standard handler (`createMcpHandler`, both protocol eras, stateless 2025 era). Rules:
 * - the endpoint is `/mcp`; any other path is 404;
 * - HOST defaults to 127.0.0.1. On a loopback host the `Host` header must name a loopback host
 *   (DNS rebinding); an `Origin` header, when present, must name a loopback host, the bound host
 *   or one of `allowOrigins` (hostnames), else 403, as the MCP spec requires;
 * - with a token, every request needs `Authorization: Bearer <token>` (compared in constant
 *   time), else 401 with `WWW-Authenticate: Bearer`; the command requires one off loopback;
 * - a request body over MAX_BODY_BYTES is 413;
 * - a client that closes its connection before the response ends aborts the request: that is
 *   the cancellation of a call on Streamable HTTP.
 */
import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server as NodeServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { McpHttpHandler } from "@modelcontextprotocol/server";
import type { SdkModule } from "./server.js";

export const MAX_BODY_BYTES = 4 * 1024 * 1024;
export const MCP_PATH = "/mcp";

export interface HttpOptions {
  host: string;
  port: number;
  token?: string;
  allowOrigins: string[];
  onError(error: Error): void;
}

export interface HttpListener {
  url: string;
  close(): Promise<void>;
}

/** Whether `host` is a loopback address or name. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/** `[HOST:]PORT` → host and port; throws with a message naming the problem. */
export function parseListenAddress(text: string): { host: string; port: number } {
  const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(text.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || !(port >= 0 && port <= 65535)) throw new Error(`--http ${JSON.stringify(text)}: expected [HOST:]PORT, e.g. 8765 or 127.0.0.1:8765 or 0.0.0.0:8765 (PORT 0 to 65535)`);
  return { host: match[1]?.replace(/^\[|\]$/g, "") ?? "127.0.0.1", port };
}

export async function listenHttp(sdk: SdkModule, handler: McpHttpHandler, options: HttpOptions): Promise<HttpListener> {
  const loopback = isLoopbackHost(options.host);
  const originHosts = [...sdk.localhostAllowedOrigins(), options.host, ...options.allowOrigins];
  const hostNames = sdk.localhostAllowedHostnames();
  const expected = options.token ? Buffer.from(`Bearer ${options.token}`) : undefined;

  const server: NodeServer = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      options.onError(error instanceof Error ? error : new Error(String(error)));
      if (!res.headersSent) plain(res, 500, "internal error");
      else res.destroy();
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== MCP_PATH) return plain(res, 404, `not found: the MCP endpoint is ${MCP_PATH}`);
    if (loopback && !sdk.validateHostHeader(req.headers.host, hostNames).ok) return plain(res, 403, "forbidden: the Host header must name a loopback host");
    const origin = sdk.validateOriginHeader(req.headers.origin, originHosts);
    if (!origin.ok) return plain(res, 403, `forbidden: ${origin.message}`);
    if (expected && !sameSecret(req.headers.authorization, expected)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="yiem"');
      return plain(res, 401, "unauthorized: send Authorization: Bearer <token>");
    }
    const body = req.method === "GET" || req.method === "HEAD" ? undefined : await readBody(req);
    if (body === null) return plain(res, 413, `request body over ${MAX_BODY_BYTES} bytes`);
    const aborted = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) aborted.abort(new Error("the client closed the connection"));
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
    const request = new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? MCP_PATH}`, {
      method: req.method,
      headers,
      ...(body !== undefined ? { body } : {}),
      signal: aborted.signal,
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) {
      res.end();
      return;
    }
    const reader = response.body.getReader();
    aborted.signal.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise<void>((resolve) => res.once("drain", resolve).once("close", resolve));
    }
    res.end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}${MCP_PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
  res.end(`${text}\n`);
}

function sameSecret(header: string | undefined, expected: Buffer): boolean {
  const given = Buffer.from(header ?? "");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The body as bytes, or null when it is over MAX_BODY_BYTES. */
async function readBody(req: IncomingMessage): Promise<Uint8Array | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
