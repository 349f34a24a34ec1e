/**
 * `yiem mcp serve` with other real clients: the official SDK v1 client
 * (`@modelcontextprotocol/sdk` 1.32.2) over stdio and Streamable HTTP, the v2 client over HTTP,
 * raw HTTP for the Origin, Host and bearer-token checks, and the MCP Inspector CLI 0.15.0 (run
 * from node_modules) over stdio and HTTP, including an Inspector killed mid-call (the server's
 * stdin closes: it cancels the call and exits 0).
 */
import { request as httpRequest } from "node:http";
import { readFileSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { yiemBin } from "../support/cli.js";
import { inspector, serveEnv, serveProject, serveRuns, spawnServe, until, yiemServe } from "../support/mcp-serve.js";

const dirs: string[] = [];
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function project(spec: Record<string, unknown> = {}) {
  const dir = await serveProject(spec);
  dirs.push(dir);
  return dir;
}
const text = (result: unknown) => (((result as { content?: unknown }).content ?? []) as Array<{ text?: string }>).map((p) => p.text ?? "").join("\n");

/** `yiem mcp serve --http …` in `dir`; resolves with its URL (from agentStart) once it listens. */
async function httpServer(dir: string, args: string[], env: Record<string, string> = {}) {
  const raw = spawnServe(dir, ["--http", ...args], env);
  cleanups.push(async () => {
    if (raw.child.exitCode === null) raw.child.kill("SIGTERM");
    await raw.exit;
  });
  await until(() => /"serve":\{"transport":"http","url":"[^"]+"/.test(raw.stderr()) || raw.child.exitCode !== null, 30_000, "the server to listen");
  const url = /"url":"([^"]+)"/.exec(raw.stderr())?.[1];
  if (!url) throw new Error(`no url: ${raw.stderr()}`);
  return { raw, url };
}

/** A raw POST of an initialize request with `headers`; resolves with the status. */
function post(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }));
  });
}

describe("the SDK v1 client (@modelcontextprotocol/sdk)", { timeout: 120_000 }, () => {
  it("over stdio: list, getTime, a command tool, a validation error, a hook block, progress and a cancel", async () => {
    const dir = await project();
    const transport = new StdioV1({ command: process.execPath, args: [yiemBin, "mcp", "serve"], cwd: dir, env: serveEnv(), stderr: "pipe" });
    let stderr = "";
    const client = new ClientV1({ name: "yiem-test-v1", version: "1.0.0" });
    await client.connect(transport);
    transport.stderr?.on("data", (d: Buffer) => (stderr += d));
    cleanups.push(() => client.close());
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["getTime", "upper", "danger", "slow"]));
    expect(text(await client.callTool({ name: "getTime", arguments: { timezone: "Europe/Oslo" } }))).toContain("Europe/Oslo");
    expect(text(await client.callTool({ name: "upper", arguments: { text: "v1" } }))).toBe('{"TEXT":"V1"}');
    const invalid = await client.callTool({ name: "getTime", arguments: { timezone: "UTC", more: 2 } });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toContain("more: is not an allowed property");
    const blocked = await client.callTool({ name: "danger", arguments: {} });
    expect(blocked).toMatchObject({ isError: true, content: [{ type: "text", text: "Tool call blocked: danger is blocked by the site policy" }] });
    const progress: string[] = [];
    // v1 handles notifications a microtask later than responses: a result in the same read as
    // the progress would drop it on the client's side, so this call lasts a little.
    await client.callTool({ name: "slow", arguments: { ms: 300 } }, undefined, { onprogress: (p) => progress.push(String(p.message)) });
    expect(progress).toEqual(["step 1 of 3", "step 2 of 3", "step 3 of 3"]);
    const cancelled = client.callTool({ name: "slow", arguments: { ms: 60_000 } }, undefined, { signal: AbortSignal.timeout(500) });
    await expect(cancelled).rejects.toThrow();
    await until(() => stderr.includes("slow saw its signal abort"), 10_000, "slow's abort");
  });

  it("over Streamable HTTP with a bearer token: none or a wrong one is 401, the right one works", async () => {
    const dir = await project();
    const { url } = await httpServer(dir, ["127.0.0.1:0", "--token-env", "SERVE_TOKEN"], { SERVE_TOKEN: "tok-123456" });
    const without = new ClientV1({ name: "v1", version: "1" });
    await expect(without.connect(new HttpV1(new URL(url)))).rejects.toThrow(/401|nauthorized/);
    const wrong = new ClientV1({ name: "v1", version: "1" });
    await expect(wrong.connect(new HttpV1(new URL(url), { requestInit: { headers: { Authorization: "Bearer nope" } } }))).rejects.toThrow(/401|nauthorized/);
    const client = new ClientV1({ name: "v1", version: "1" });
    await client.connect(new HttpV1(new URL(url), { requestInit: { headers: { Authorization: "Bearer tok-123456" } } }));
    cleanups.push(() => client.close());
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("getTime");
    const blocked = await client.callTool({ name: "danger", arguments: {} });
    expect(blocked.isError).toBe(true);
    expect(text(await client.callTool({ name: "upper", arguments: { text: "http" } }))).toBe('{"TEXT":"HTTP"}');
  });
});

describe("Streamable HTTP", { timeout: 120_000 }, () => {
  it("the v2 client: list, call, progress, and a cancel (closing the stream aborts the tool)", async () => {
    const dir = await project();
    const { raw, url } = await httpServer(dir, ["0"]);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = new ClientV2({ name: "v2", version: "1" });
    await client.connect(new HttpV2(new URL(url)));
    cleanups.push(() => client.close());
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("slow");
    expect(text(await client.callTool({ name: "getTime", arguments: { timezone: "UTC" } }))).toContain("UTC");
    const progress: string[] = [];
    await client.callTool({ name: "slow", arguments: { ms: 1 } }, { onprogress: (p) => progress.push(String(p.message)) });
    expect(progress).toEqual(["step 1 of 3", "step 2 of 3", "step 3 of 3"]);
    await expect(client.callTool({ name: "slow", arguments: { ms: 60_000 } }, { signal: AbortSignal.timeout(500) })).rejects.toThrow();
    await until(() => raw.stderr().includes("slow saw its signal abort"), 10_000, "slow's abort");
    raw.child.kill("SIGTERM");
    expect((await raw.exit).code).toBe(143);
    const { session } = serveRuns(raw.stderr());
    expect(session[0]).toMatchObject({ type: "agentStart", serve: { transport: "http", url } });
    expect(session.at(-1)).toMatchObject({ type: "agentEnd", stopReason: "aborted" });
  });

  it("a foreign Origin is 403, a loopback one is accepted; a rebinding Host is 403 on loopback", async () => {
    const dir = await project();
    const { url } = await httpServer(dir, ["127.0.0.1:0", "--allow-origin", "tools.example.com"]);
    const port = new URL(url).port;
    expect(await post(url, { origin: "https://evil.example" })).toBe(403);
    expect(await post(url, { origin: "null" })).toBe(403);
    expect(await post(url, { origin: `http://localhost:${port}` })).toBe(200);
    expect(await post(url, { origin: "https://tools.example.com" })).toBe(200);
    expect(await post(url, {})).toBe(200);
    expect(await post(url, { host: `evil.example:${port}` })).toBe(403);
    expect(await post(url.replace("/mcp", "/other"), {})).toBe(404);
  });

  it("off loopback it serves with the token (and refuses without it)", async () => {
    const dir = await project();
    const { url } = await httpServer(dir, ["0.0.0.0:0", "--token-env", "SERVE_TOKEN"], { SERVE_TOKEN: "tok-abcdef" });
    const local = url.replace("0.0.0.0", "127.0.0.1");
    expect(await post(local, {})).toBe(401);
    expect(await post(local, { authorization: "Bearer tok-abcdef" })).toBe(200);
  });
});

describe("the MCP Inspector CLI 0.15.0 (from node_modules)", { timeout: 180_000 }, () => {
  it("over stdio: tools/list, getTime, a command tool, a validation error and a hook block", async () => {
    const dir = await project();
    const list = await inspector([...yiemServe(), "--method", "tools/list"], { cwd: dir });
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toEqual(expect.arrayContaining(["listTools", "getTime", "upper", "danger"]));
    const time = await inspector([...yiemServe(), "--method", "tools/call", "--tool-name", "getTime", "--tool-arg", "timezone=Asia/Tokyo"], { cwd: dir });
    expect(time.code, time.stderr).toBe(0);
    expect(JSON.parse(time.stdout)).toMatchObject({ content: [{ type: "text", text: expect.stringContaining("Asia/Tokyo") }], _meta: { details: { timezone: "Asia/Tokyo" } } });
    const upper = await inspector([...yiemServe(), "--method", "tools/call", "--tool-name", "upper", "--tool-arg", "text=inspected"], { cwd: dir });
    expect(JSON.parse(upper.stdout).content).toEqual([{ type: "text", text: '{"TEXT":"INSPECTED"}' }]);
    const invalid = await inspector([...yiemServe(), "--method", "tools/call", "--tool-name", "getTime", "--tool-arg", "timezone=UTC", "--tool-arg", "when=now"], { cwd: dir });
    expect(invalid.code).toBe(0);
    expect(JSON.parse(invalid.stdout)).toMatchObject({ isError: true, content: [{ text: expect.stringContaining("when: is not an allowed property") }] });
    const blocked = await inspector([...yiemServe(), "--method", "tools/call", "--tool-name", "danger"], { cwd: dir });
    expect(JSON.parse(blocked.stdout)).toEqual({ content: [{ type: "text", text: "Tool call blocked: danger is blocked by the site policy" }], isError: true });
  });

  it("over HTTP: tools/list with no token needed on loopback; a token-guarded server refuses it", async () => {
    const dir = await project();
    const { url } = await httpServer(dir, ["0"]);
    const list = await inspector([url, "--method", "tools/list"], { cwd: dir });
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).tools.map((t: { name: string }) => t.name)).toContain("getTime");
    const guarded = await httpServer(dir, ["127.0.0.1:0", "--token-env", "SERVE_TOKEN"], { SERVE_TOKEN: "tok-zz-9" });
    const refused = await inspector([guarded.url, "--method", "tools/list"], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr + refused.stdout).toMatch(/401|nauthorized/);
  });

  it("an Inspector killed mid-call closes the server's stdin: the call is cancelled and the server exits 0", async () => {
    const dir = await project();
    const codeFile = join(dir, "server-exit-code");
    const script = `"${process.execPath}" "${yiemBin}" mcp serve 2> "${join(dir, "server.ndjson")}"; echo $? > "${codeFile}"`;
    const run = inspector(["bash", "-c", script, "--method", "tools/call", "--tool-name", "slow", "--tool-arg", "ms=60000"], {
      cwd: dir,
      onSpawn: (child) => {
        const timer = setInterval(async () => {
          const events = await readFile(join(dir, "server.ndjson"), "utf8").catch(() => "");
          if (events.includes('"toolExecutionStart"')) {
            clearInterval(timer);
            child.kill("SIGKILL");
          }
        }, 50);
        child.on("close", () => clearInterval(timer));
      },
    });
    await run;
    await until(() => {
      try {
        return readFileSync(codeFile, "utf8").trim() !== "";
      } catch {
        return false;
      }
    }, 20_000, "the server's exit code");
    expect((await readFile(codeFile, "utf8")).trim()).toBe("0");
    const { session } = serveRuns(await readFile(join(dir, "server.ndjson"), "utf8"));
    expect(session.find((e) => e.type === "toolExecutionEnd")).toMatchObject({ toolName: "slow", isError: true });
    expect(session.at(-1)).toMatchObject({ type: "agentEnd", stopReason: "completed", toolCalls: 1 });
  });
});
