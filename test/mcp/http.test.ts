/**
 * MCP over Streamable HTTP on 127.0.0.1: the reference server (`server-everything streamableHttp`)
 * driven by the scripted model through `yiem run`, and a server that refuses with 401.
 */
import { createServer, type Server } from "node:http";
import { rm } from "node:fs/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";
import { mcpProject, startEverythingHttp } from "../support/mcp.js";

let everything: Awaited<ReturnType<typeof startEverythingHttp>>;
let refusing: Server;
let refusingUrl: string;
const seenAuth: string[] = [];
let server: ChatServer | undefined;
const dirs: string[] = [];

beforeAll(async () => {
  everything = await startEverythingHttp();
  refusing = createServer((req, res) => {
    seenAuth.push(String(req.headers.authorization ?? ""));
    res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
  });
  await new Promise<void>((r) => refusing.listen(0, "127.0.0.1", r));
  refusingUrl = `http://127.0.0.1:${(refusing.address() as { port: number }).port}/mcp`;
}, 60_000);
afterAll(async () => {
  await everything?.close();
  await new Promise((r) => refusing?.close(r));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const env = (s: ChatServer, extra: Record<string, string> = {}) => ({ TEST_BASE_URL: s.url, TEST_API_KEY: "sk-test-secret-value", ...extra });

describe("MCP over Streamable HTTP", { timeout: 120_000 }, () => {
  it("calls the reference server's tools: text, image and structured results, and progress", async () => {
    server = await startChatServer([
      reply.json({ toolCalls: [
        { id: "c1", name: "mcp__web__echo", arguments: '{"message":"over http"}' },
        { id: "c2", name: "mcp__web__get-tiny-image", arguments: "{}" },
        { id: "c3", name: "mcp__web__get-structured-content", arguments: '{"location":"New York"}' },
        { id: "c4", name: "mcp__web__trigger-long-running-operation", arguments: '{"duration":0.4,"steps":2}' },
      ] }),
      reply.json({ content: "all done" }),
    ]);
    const dir = await mcpProject({ mcpServers: { web: { url: everything.url } } });
    dirs.push(dir);
    const r = await runCli(["run", "go"], { cwd: dir, env: env(server), timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("all done\n");
    assertEventStream(r.events);
    expect(r.events.find((e) => e.type === "mcpServerReady")).toMatchObject({ server: "web", transport: "http", serverInfo: { name: "mcp-servers/everything" } });
    const ends = new Map((r.events.filter((e) => e.type === "toolExecutionEnd") as Array<Record<string, any>>).map((e) => [e.toolCallId, e]));
    expect(ends.get("c1")).toMatchObject({ isError: false, mcp: { server: "web", tool: "echo" }, result: { content: [{ type: "text", text: "Echo: over http" }] } });
    expect(ends.get("c2")!.result.content.some((p: { type: string; mimeType?: string }) => p.type === "image" && p.mimeType === "image/png")).toBe(true);
    expect(ends.get("c3")!.result.details.structuredContent).toEqual(expect.objectContaining({ temperature: expect.any(Number) }));
    expect(ends.get("c4")!.isError).toBe(false);
    expect(r.events.filter((e) => e.type === "toolExecutionUpdate" && e.toolCallId === "c4").length).toBeGreaterThanOrEqual(1);
  });

  it("a server that refuses with 401: exit 1 before any model call, naming the status; headers are sent", async () => {
    server = await startChatServer([reply.json({ content: "should not be asked" })]);
    const dir = await mcpProject({ mcpServers: { locked: { url: refusingUrl, headers: { Authorization: "Bearer ${LOCKED_TOKEN}" } } } });
    dirs.push(dir);
    const r = await runCli(["run", "go"], { cwd: dir, env: env(server, { LOCKED_TOKEN: "tok-123456789" }), timeoutMs: 60_000 });
    expect(r.code).toBe(1);
    expect(server.requests).toHaveLength(0);
    assertEventStream(r.events, { requireStart: false });
    expect(r.events[0]).toMatchObject({ type: "mcpServerError", server: "locked", phase: "connect", required: true });
    const end = r.events.at(-1) as Record<string, any>;
    expect(end.error).toContain('MCP server "locked" failed (connect): HTTP 401');
    expect(seenAuth).toContain("Bearer tok-123456789");
    // The token is a secret of the environment: it never appears in events.
    expect(r.stderr).not.toContain("tok-123456789");
  });
});
