/**
 * `yiem mcp serve` over stdio, driven by the official MCP SDK v2 client
 * (`@modelcontextprotocol/client`) as an MCP host runs it: tools/list is what `yiem run` offers,
 * calls go through the loop's pipeline (validation, hooks, policy) and come back as results,
 * progress, cancellation, stdin's end, signals, list_changed after writeTool, and the NDJSON
 * events on stderr.
 */
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";
import { groupMembers, isAlive, reap } from "../support/processes.js";
import { INIT, INITIALIZED, serveEnv, serveProject, serveRuns, serveV2, spawnServe, until, type Served } from "../support/mcp-serve.js";

const dirs: string[] = [];
const servers: Served[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.client.close().catch(() => {});
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function project(spec: Record<string, unknown> = {}) {
  const dir = await serveProject(spec);
  dirs.push(dir);
  return dir;
}
async function serve(dir: string, args: string[] = []) {
  const served = await serveV2(dir, args);
  servers.push(served);
  return served;
}
const text = (result: { content: unknown }) => (result.content as Array<{ type: string; text?: string }>).map((p) => p.text ?? "").join("\n");
const pidsOf = (progress: string[]) => ({
  main: Number(/main (\d+)/.exec(progress.join("\n"))?.[1] ?? 0),
  grandchild: Number(/grandchild (\d+)/.exec(progress.join("\n"))?.[1] ?? 0),
});

describe("yiem mcp serve over stdio (SDK v2 client)", { timeout: 120_000 }, () => {
  it("tools/list is exactly what yiem run offers the model, with each tool's schema", async () => {
    const dir = await project();
    const s = await serve(dir);
    const { tools } = await s.client.listTools();
    const dry = await runCli(["run", "--dry-run", "--events", "none", "hello"], { cwd: dir, env: serveEnv() });
    expect(dry.code, dry.stderr).toBe(0);
    const offered = JSON.parse(dry.stdout) as { tools: string[]; request: { tools: Array<{ function: { name: string; description: string; parameters: unknown } }> } };
    expect(tools.map((t) => t.name)).toEqual(offered.tools);
    for (const fn of offered.request.tools.map((t) => t.function)) {
      const served = tools.find((t) => t.name === fn.name)!;
      expect(served.description).toBe(fn.description);
      expect(served.inputSchema).toEqual(fn.parameters);
    }
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["listTools", "getTime", "upper", "slow", "family", "noisy"]));
    expect(s.client.getServerVersion()).toMatchObject({ name: "yiem" });
    expect(await s.close()).toBe(0);
  });

  it("--deny-tools and --allow-tools shape tools/list, and a denied tool answers as an unknown one", async () => {
    const dir = await project();
    const s = await serve(dir, ["--deny-tools", "getWeather,fam*"]);
    const names = (await s.client.listTools()).tools.map((t) => t.name);
    expect(names).not.toContain("getWeather");
    expect(names).not.toContain("family");
    expect(names).toContain("getTime");
    const denied = await s.client.callTool({ name: "getWeather", arguments: { city: "Oslo" } });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toMatch(/^Unknown tool "getWeather"\. Available tools: .*getTime/);
    expect(text(denied)).not.toContain("getWeather,");
    await s.close();
  });

  it("getTime and a command tool: content, details in _meta (never structuredContent), progress from stderr lines", async () => {
    const dir = await project();
    const s = await serve(dir);
    const time = await s.client.callTool({ name: "getTime", arguments: { timezone: "Asia/Tokyo" } });
    expect(time.isError).toBeFalsy();
    expect(text(time)).toMatch(/Asia\/Tokyo/);
    expect(time.structuredContent).toBeUndefined();
    expect((time._meta as { details: { timezone: string } }).details.timezone).toBe("Asia/Tokyo");
    const progress: string[] = [];
    const upper = await s.client.callTool({ name: "upper", arguments: { text: "shout" } }, { onprogress: (p) => progress.push(String(p.message)) });
    expect(upper.isError).toBeFalsy();
    expect(text(upper)).toBe('{"TEXT":"SHOUT"}');
    expect(progress).toEqual(["upper-casing"]);
    const picture = await s.client.callTool({ name: "picture", arguments: {} });
    expect(picture.content).toEqual([{ type: "image", data: expect.stringMatching(/^iVBOR/), mimeType: "image/png" }, { type: "text", text: "a pixel" }]);
    expect(picture._meta).toEqual({ details: { width: 1, height: 1 }, usage: { promptTokens: 2, completionTokens: 3, totalTokens: 5 } });
    expect(await s.close()).toBe(0);
    const { session } = serveRuns(s.stderr());
    expect(session[0]).toMatchObject({ type: "agentStart", model: "none", serve: { transport: "stdio" } });
    const ends = session.filter((e) => e.type === "toolExecutionEnd");
    expect(ends.map((e) => [e.toolName, e.turn])).toEqual([["getTime", 1], ["upper", 2], ["picture", 3]]);
    expect(session.at(-1)).toMatchObject({ type: "agentEnd", stopReason: "completed", toolCalls: 3, usage: { totalTokens: 5 } });
  });

  it("a validation error, a hook's block and an unknown tool are isError results with the model's text, not protocol errors", async () => {
    const dir = await project();
    const s = await serve(dir);
    const invalid = await s.client.callTool({ name: "getTime", arguments: { timezone: 42, extra: true } });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toBe('Invalid arguments for tool "getTime":\n- extra: is not an allowed property\nReceived arguments: {"timezone":42,"extra":true}');
    const upper = await s.client.callTool({ name: "upper", arguments: {} });
    expect(upper.isError).toBe(true);
    expect(text(upper)).toContain("text: is required");
    const blocked = await s.client.callTool({ name: "danger", arguments: {} });
    expect(blocked.isError).toBe(true);
    expect(text(blocked)).toBe("Tool call blocked: danger is blocked by the site policy");
    const unknown = await s.client.callTool({ name: "nosuch", arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/^Unknown tool "nosuch"/);
    await s.close();
    const { session } = serveRuns(s.stderr());
    expect(session.filter((e) => e.type === "toolCallRejected").map((e) => e.toolName)).toEqual(["getTime", "upper", "danger", "nosuch"]);
    expect(session.some((e) => e.type === "toolExecutionStart" && e.toolName === "danger")).toBe(false);
  });

  it("module hooks: beforeToolCall blocks or rewrites the arguments, afterToolCall rewrites the result", async () => {
    const policy = join(repoRoot, "test", "fixtures", "hooks", "policy.ts");
    const dir = await project({ hooks: { beforeToolCall: policy, afterToolCall: policy } });
    const s = await serve(dir);
    const blocked = await s.client.callTool({ name: "danger", arguments: {} });
    expect(blocked).toMatchObject({ isError: true, content: [{ type: "text", text: "Tool call blocked: the module policy says no" }] });
    const upper = await s.client.callTool({ name: "upper", arguments: { text: "a", city: "oslo" } });
    expect(upper.isError).toBeFalsy();
    expect(text(upper)).toBe('module saw: {"TEXT":"A","CITY":"OSLO"}');
    await s.close();
    const { session } = serveRuns(s.stderr());
    expect(session.find((e) => e.type === "toolExecutionStart" && e.toolName === "upper")).toMatchObject({ args: { text: "a", city: "OSLO" } });
  });

  it("the tool timeout (--tool-timeout) ends a call as an isError result and aborts the tool", async () => {
    const dir = await project();
    const s = await serve(dir, ["--tool-timeout", "300ms"]);
    const late = await s.client.callTool({ name: "slow", arguments: { ms: 30_000 } });
    expect(late).toMatchObject({ isError: true, content: [{ type: "text", text: 'Tool "slow" timed out after 300 ms.' }] });
    await until(() => s.stderr().includes("slow saw its signal abort"), 10_000, "slow's abort");
    await s.close();
  });

  it("progress notifications carry onPartialResult when the client sends a progress token", async () => {
    const dir = await project();
    const s = await serve(dir);
    const seen: Array<{ progress: number; message?: string }> = [];
    const done = await s.client.callTool({ name: "slow", arguments: { ms: 10 } }, { onprogress: (p) => seen.push({ progress: p.progress, message: p.message }) });
    expect(text(done)).toBe("waited 10 ms");
    expect(seen).toEqual([{ progress: 1, message: "step 1 of 3" }, { progress: 2, message: "step 2 of 3" }, { progress: 3, message: "step 3 of 3" }]);
    await s.close();
  });

  it("cancellation mid-call aborts the tool's signal and ends a command tool's whole process group", async () => {
    const dir = await project();
    const s = await serve(dir);
    const progress: string[] = [];
    const controller = new AbortController();
    const call = s.client.callTool({ name: "family", arguments: {} }, { signal: controller.signal, onprogress: (p) => progress.push(String(p.message)) });
    await until(() => pidsOf(progress).main > 0 && pidsOf(progress).grandchild > 0, 20_000, "the family pids");
    const { main, grandchild } = pidsOf(progress);
    controller.abort(new Error("user cancelled"));
    await expect(call).rejects.toThrow();
    try {
      await until(() => !isAlive(main) && !isAlive(grandchild) && groupMembers(main).length === 0, 10_000, "the family group to end");
      const slowCall = s.client.callTool({ name: "slow", arguments: { ms: 60_000 } }, { signal: AbortSignal.timeout(300) });
      await expect(slowCall).rejects.toThrow();
      await until(() => s.stderr().includes("slow saw its signal abort"), 10_000, "slow's abort");
      // The server goes on serving after a cancel.
      expect(text(await s.client.callTool({ name: "getTime", arguments: { timezone: "UTC" } }))).toContain("UTC");
    } finally {
      reap(main);
    }
    expect(await s.close()).toBe(0);
    const { session } = serveRuns(s.stderr());
    const familyEnd = session.find((e) => e.type === "toolExecutionEnd" && e.toolName === "family");
    expect(familyEnd).toMatchObject({ isError: true });
  });

  it("stdin's end mid-call cancels the call, ends the process group and exits 0", async () => {
    const dir = await project();
    const raw = spawnServe(dir);
    raw.send(INIT);
    raw.send(INITIALIZED);
    raw.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "family", arguments: {}, _meta: { progressToken: "p1" } } });
    await until(() => /main (\d+)/.test(raw.stdout()) && /grandchild (\d+)/.test(raw.stdout()), 20_000, "the family pids");
    const main = Number(/main (\d+)/.exec(raw.stdout())![1]);
    const grandchild = Number(/grandchild (\d+)/.exec(raw.stdout())![1]);
    raw.child.stdin!.end();
    try {
      expect((await raw.exit).code).toBe(0);
      await until(() => !isAlive(main) && !isAlive(grandchild), 5_000, "the group to end");
    } finally {
      reap(main);
    }
    const { session } = serveRuns(raw.stderr());
    expect(session.at(-1)).toMatchObject({ type: "agentEnd", stopReason: "completed" });
    expect(session.find((e) => e.type === "toolExecutionEnd")).toMatchObject({ toolName: "family", isError: true });
  });

  it.each([["SIGTERM", 143], ["SIGINT", 130]] as const)("%s mid-call ends the call and exits %i", async (signal, code) => {
    const dir = await project();
    const raw = spawnServe(dir);
    raw.send(INIT);
    raw.send(INITIALIZED);
    raw.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "family", arguments: {}, _meta: { progressToken: 7 } } });
    await until(() => /main (\d+)/.test(raw.stdout()), 20_000, "the family pid");
    const main = Number(/main (\d+)/.exec(raw.stdout())![1]);
    raw.child.kill(signal);
    try {
      expect((await raw.exit).code).toBe(code);
      expect(isAlive(main)).toBe(false);
    } finally {
      reap(main);
    }
    const { session } = serveRuns(raw.stderr());
    expect(session.at(-1)).toMatchObject({ type: "agentEnd", stopReason: "aborted", error: `mcp serve ended by ${signal}` });
  });

  it("stdout carries only protocol messages: a tool's console.log at import and in its body goes to stderr as warnings", async () => {
    const dir = await project();
    const raw = spawnServe(dir);
    raw.send(INIT);
    raw.send(INITIALIZED);
    raw.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "noisy", arguments: {} } });
    await until(() => raw.stdout().includes('"id":2'), 20_000, "the noisy result");
    raw.child.stdin!.end();
    expect((await raw.exit).code).toBe(0);
    const lines = raw.stdout().split("\n").filter(Boolean);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
    expect(lines.map((l) => JSON.parse(l).id)).toEqual([1, 2]);
    expect(JSON.parse(lines[1]).result.content).toEqual([{ type: "text", text: "quiet result" }]);
    const warnings = serveRuns(raw.stderr()).session.filter((e) => e.type === "warning").map((e) => e.message);
    expect(warnings).toEqual([
      "tool or hook code wrote to stdout: noisy loaded: this line must not reach the MCP client",
      "tool or hook code wrote to stdout: noisy body: console.log",
      "tool or hook code wrote to stdout: noisy body: direct write",
      "tool or hook code wrote to stderr: noisy body: console.error",
    ]);
  });

  it("--events none: nothing of yiem's own on stderr; tool output still never reaches stdout", async () => {
    const dir = await project();
    const raw = spawnServe(dir, ["--events", "none"]);
    raw.send(INIT);
    raw.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "getTime", arguments: { timezone: "UTC" } } });
    await until(() => raw.stdout().includes('"id":2'), 20_000, "the result");
    raw.child.stdin!.end();
    expect((await raw.exit).code).toBe(0);
    expect(raw.stderr().split("\n").filter((l) => l.startsWith("{"))).toEqual([]);
    expect(raw.stderr()).toMatch(/^(yiem: tool or hook code wrote to stdout: noisy loaded.*\n)?$/);
  });

  it("a tool written by writeTool appears in tools/list and notifications/tools/list_changed is sent", async () => {
    const dir = await project({ builtinTools: ["listTools", "writeTool"], writeToolDir: "./generated" });
    const s = await serve(dir);
    let changed = 0;
    s.client.setNotificationHandler("notifications/tools/list_changed", () => void changed++);
    const before = (await s.client.listTools()).tools.map((t) => t.name);
    expect(before).toContain("writeTool");
    const written = await s.client.callTool({
      name: "writeTool",
      arguments: { name: "addTwo", label: "Add two", description: "Adds two numbers.", inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] }, executeCode: "return String(args.a + args.b);" },
    });
    expect(written.isError, text(written)).toBeFalsy();
    await until(() => changed > 0, 10_000, "list_changed");
    const after = (await s.client.listTools()).tools.map((t) => t.name);
    expect(after).toEqual([...before, "addTwo"]);
    expect(text(await s.client.callTool({ name: "addTwo", arguments: { a: 2, b: "3" } }))).toBe("5");
    expect(await readFile(join(dir, "generated", "addTwo.ts"), "utf8")).toContain("addTwo");
    await s.close();
  });

  it("a bad spec is exit 2 with one agentEnd; --http without a token off loopback is exit 2", async () => {
    const dir = await project({ toolExecution: "sideways" });
    const bad = await runCli(["mcp", "serve"], { cwd: dir, env: serveEnv(), stdin: "" });
    expect(bad.code).toBe(2);
    expect(bad.events.at(-1)).toMatchObject({ type: "agentEnd", stopReason: "error", error: expect.stringContaining("toolExecution") });
    const open = await runCli(["mcp", "serve", "--http", "0.0.0.0:0", "--events", "none"], { cwd: await project(), env: serveEnv() });
    expect(open.code).toBe(2);
    expect(open.stderr).toBe("yiem: --http 0.0.0.0:0 binds 0.0.0.0, which is not loopback: give a bearer token with --token-env NAME\n");
    const port = await runCli(["mcp", "serve", "--http", "localhost:99999", "--events", "none"], { cwd: dir, env: serveEnv() });
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--http "localhost:99999": expected [HOST:]PORT');
  });
});
