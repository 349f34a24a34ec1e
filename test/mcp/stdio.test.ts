/**
 * MCP over stdio, end to end: `yiem run` with the scripted model against the real reference
 * server (`@modelcontextprotocol/server-everything`), started with node from node_modules.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, type CliResult } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";
import { everythingStdio, fixture, mcpProject } from "../support/mcp.js";

let server: ChatServer | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const env = (s: ChatServer, extra: Record<string, string> = {}) => ({ TEST_BASE_URL: s.url, TEST_API_KEY: "sk-test-secret-value", ...extra });

/** One tool call, then a final answer; returns the run and the tool's end event. */
async function callOnce(spec: Record<string, unknown>, tool: string, args: unknown, extra: { env?: Record<string, string>; argv?: string[] } = {}) {
  server = await startChatServer([
    reply.json({ toolCalls: [{ id: "c1", name: tool, arguments: JSON.stringify(args) }] }),
    reply.json({ content: "done" }),
  ]);
  const dir = await mcpProject(spec);
  dirs.push(dir);
  const r = await runCli(["run", ...(extra.argv ?? []), "go"], { cwd: dir, env: env(server, extra.env), timeoutMs: 60_000 });
  assertEventStream(r.events);
  const end = r.events.find((e) => e.type === "toolExecutionEnd") as (Record<string, any> | undefined);
  return { r, end, dir };
}

function toolMessage(s: ChatServer, index = 1) {
  return s.requests[index].messages.find((m: { role: string }) => m.role === "tool");
}

describe("MCP over stdio with the reference server", { timeout: 120_000 }, () => {
  it("connects before agentStart, offers mcp__everything__* tools, and a text result reaches the model", async () => {
    const { r, end } = await callOnce({ mcpServers: { everything: everythingStdio() } }, "mcp__everything__echo", { message: "hi there" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("done\n");
    const start = r.events[0] as Record<string, any>;
    expect(start.tools).toContain("mcp__everything__echo");
    expect(start.mcpServers).toEqual([expect.objectContaining({ name: "everything", transport: "stdio", status: "ready", required: true })]);
    const ready = r.events.find((e) => e.type === "mcpServerReady") as Record<string, any>;
    expect(ready).toMatchObject({ server: "everything", transport: "stdio", serverInfo: { name: "mcp-servers/everything" } });
    expect(ready.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(ready.seq).toBeLessThan(r.events.findIndex((e) => e.type === "turnStart") + 1);
    expect(end).toMatchObject({ isError: false, mcp: { server: "everything", tool: "echo" }, result: { content: [{ type: "text", text: "Echo: hi there" }] } });
    // The first request already offered the MCP tools (none went missing), the second got the result.
    const offered = server!.requests[0].tools.map((t: { function: { name: string } }) => t.function.name);
    expect(offered).toContain("mcp__everything__get-sum");
    expect(toolMessage(server!).content).toContain("Echo: hi there");
  });

  it("an image result is an image part", async () => {
    const { r, end } = await callOnce({ mcpServers: { everything: everythingStdio() } }, "mcp__everything__get-tiny-image", {});
    expect(r.code, r.stderr).toBe(0);
    const image = end!.result.content.find((p: { type: string }) => p.type === "image");
    expect(image).toMatchObject({ type: "image", mimeType: "image/png" });
    expect(image.data.length).toBeGreaterThan(100);
  });

  it("structuredContent goes into details", async () => {
    const { r, end } = await callOnce({ mcpServers: { everything: everythingStdio() } }, "mcp__everything__get-structured-content", { location: "Chicago" });
    expect(r.code, r.stderr).toBe(0);
    expect(end!.isError).toBe(false);
    expect(end!.result.details).toMatchObject({ mcp: { server: "everything", tool: "get-structured-content" }, structuredContent: expect.objectContaining({ temperature: expect.any(Number) }) });
  });

  it("a server's error result (isError) is an error result with the server's words; the run goes on", async () => {
    const { r, end } = await callOnce({ mcpServers: { everything: everythingStdio() } }, "mcp__everything__gzip-file-as-resource", { data: "ftp://example.invalid/x" });
    expect(r.code, r.stderr).toBe(0);
    expect(end!.isError).toBe(true);
    expect(JSON.stringify(end!.result.content)).toContain("Unsupported URL protocol");
    expect(toolMessage(server!).content).toContain("Unsupported URL protocol");
  });

  it("progress notifications become toolExecutionUpdate events", async () => {
    const { r, end } = await callOnce({ mcpServers: { everything: everythingStdio() } }, "mcp__everything__trigger-long-running-operation", { duration: 0.6, steps: 3 });
    expect(r.code, r.stderr).toBe(0);
    expect(end!.isError).toBe(false);
    const updates = r.events.filter((e) => e.type === "toolExecutionUpdate") as Array<Record<string, any>>;
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(updates[0]).toMatchObject({ mcp: { server: "everything" }, partialResult: { details: { progress: { progress: 1, total: 3 } } } });
    expect(updates[0].partialResult.content[0].text).toMatch(/^progress 1\/3/);
  });

  it("a slow tool hits the server's toolTimeoutMs (an absolute cap, progress does not extend it)", async () => {
    const started = Date.now();
    const { r, end } = await callOnce(
      { mcpServers: { everything: everythingStdio({ toolTimeoutMs: "1500ms" }) } },
      "mcp__everything__trigger-long-running-operation", { duration: 20, steps: 40 },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(end!.isError).toBe(true);
    expect(JSON.stringify(end!.result.content)).toMatch(/timed out after 1500 ms/);
    expect(end!.durationMs).toBeLessThan(5000);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("allow/deny on the server's own tool names, and --deny-tools on the offered names", async () => {
    server = await startChatServer([reply.json({ content: "ok" })]);
    const dir = await mcpProject({ mcpServers: { everything: everythingStdio({ tools: { allow: ["echo", "get-*"], deny: ["get-env"] } }) } });
    dirs.push(dir);
    const r = await runCli(["run", "--deny-tools", "mcp__everything__get-sum", "hi"], { cwd: dir, env: env(server), timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const offered: string[] = server.requests[0].tools.map((t: { function: { name: string } }) => t.function.name);
    expect(offered).toContain("mcp__everything__echo");
    expect(offered).toContain("mcp__everything__get-tiny-image");
    expect(offered).not.toContain("mcp__everything__get-env");
    expect(offered).not.toContain("mcp__everything__get-sum");
    expect(offered).not.toContain("mcp__everything__toggle-simulated-logging");
  });
});

describe("MCP fixture servers over stdio", { timeout: 120_000 }, () => {
  it("list_changed: a tool added by a call is offered from the next turn, with mcpToolsChanged", async () => {
    server = await startChatServer([
      reply.json({ toolCalls: [{ id: "c1", name: "mcp__fx__add-tool", arguments: "{}" }] }),
      reply.json({ toolCalls: [{ id: "c2", name: "mcp__fx__added", arguments: "{}" }] }),
      reply.json({ content: "done" }),
    ]);
    const dir = await mcpProject({ mcpServers: { fx: fixture("ok") } });
    dirs.push(dir);
    const r = await runCli(["run", "go"], { cwd: dir, env: env(server), timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    assertEventStream(r.events);
    const names = (i: number) => server!.requests[i].tools.map((t: { function: { name: string } }) => t.function.name);
    expect(names(0)).not.toContain("mcp__fx__added");
    expect(names(1)).toContain("mcp__fx__added");
    expect(r.events.find((e) => e.type === "mcpToolsChanged")).toMatchObject({ server: "fx", added: ["mcp__fx__added"], removed: [] });
    const ends = r.events.filter((e) => e.type === "toolExecutionEnd") as Array<Record<string, any>>;
    expect(ends[1]).toMatchObject({ isError: false, result: { content: [{ type: "text", text: "the added tool ran" }] } });
  });

  it("a tool name that needs sanitising is offered under the function-name rule and called by its own name", async () => {
    const { r, end } = await callOnce({ mcpServers: { fx: fixture("ok") } }, "mcp__fx__weird_name_with_spaces", {});
    expect(r.code, r.stderr).toBe(0);
    expect(end).toMatchObject({ mcp: { server: "fx", tool: "weird.name/with spaces" } });
    // The server answered "not found" for any other name, so a result means the raw name was sent.
    expect(end!.isError).toBe(true);
    expect(JSON.stringify(end!.result.content)).toContain("Tool weird.name/with spaces not found");
  });

  it("a timed-out call sends notifications/cancelled to the server", async () => {
    const log = join(await mcpProject({}), "fixture.log");
    const { r, end } = await callOnce(
      { mcpServers: { fx: fixture("ok", { toolTimeoutMs: 800, env: { FIXTURE_LOG: log } }) } },
      "mcp__fx__hang", {},
    );
    expect(r.code, r.stderr).toBe(0);
    expect(end!.isError).toBe(true);
    expect(await readFile(log, "utf8")).toMatch(/^cancelled \S+/m);
  });

  it("a result that breaks the tool's outputSchema is an error result, not a crash", async () => {
    const { r, end } = await callOnce({ mcpServers: { fx: fixture("ok") } }, "mcp__fx__bad-output", {});
    expect(r.code, r.stderr).toBe(0);
    expect(end!.isError).toBe(true);
    expect(end!.result.content[0].text).toBe(`MCP server fx, tool "bad-output": Structured content does not match the tool's output schema: data/count must be number`);
  });

  it("a server that exits mid-call: an error result naming the exit, then mcpServerError (runtime)", async () => {
    const { r, end } = await callOnce({ mcpServers: { fx: fixture("ok") } }, "mcp__fx__exit-now", {});
    expect(r.code, r.stderr).toBe(0);
    expect(end!.isError).toBe(true);
    expect(JSON.stringify(end!.result.content)).toMatch(/exit(ed)?|closed/i);
    const lost = r.events.find((e) => e.type === "mcpServerError") as Record<string, any>;
    expect(lost).toMatchObject({ server: "fx", phase: "runtime" });
    expect(lost.stderrTail).toContain("crashing on purpose");
  });

  it("env is merged over the child environment and cwd is relative to the spec", async () => {
    const dir = await mcpProject({});
    dirs.push(dir);
    const log = join(dir, "env.log");
    const { r, end } = await callOnce(
      { mcpServers: { fx: fixture("ok", { env: { FIXTURE_GREETING: "${GREETING}", FIXTURE_LOG: log }, cwd: "." }) } },
      "mcp__fx__hello", { name: "yiem" }, { env: { GREETING: "bonjour" } },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(end!.result.content[0].text).toMatch(/^hello yiem from \//);
    expect(await readFile(log, "utf8")).toContain("env:bonjour");
  });
});

/** The one agentEnd of a run that failed before the loop. */
function agentEnd(r: CliResult) {
  return r.events.at(-1) as Record<string, any>;
}

describe("MCP start-up failures", { timeout: 120_000 }, () => {
  const failingRun = async (spec: Record<string, unknown>, argv: string[] = [], prepare?: (dir: string) => Promise<void>) => {
    server = await startChatServer([reply.json({ content: "should not be asked" })]);
    const dir = await mcpProject(spec);
    dirs.push(dir);
    await prepare?.(dir);
    const r = await runCli(["run", ...argv, "go"], { cwd: dir, env: env(server), timeoutMs: 60_000 });
    assertEventStream(r.events, { requireStart: false });
    return { r, dir };
  };

  it("a required server that exits at start: exit 1 before any model call, its stderr in agentEnd.error", async () => {
    const { r } = await failingRun({ mcpServers: { fx: fixture("die") } });
    expect(r.code).toBe(1);
    expect(server!.requests).toHaveLength(0);
    const error = r.events.find((e) => e.type === "mcpServerError") as Record<string, any>;
    expect(error).toMatchObject({ server: "fx", phase: "handshake", required: true, message: "the server exited during start (exit code 2)" });
    expect(error.stderrTail).toContain("FATAL missing FIXTURE_TOKEN");
    expect(agentEnd(r)).toMatchObject({ type: "agentEnd", stopReason: "error", turns: 0 });
    expect(agentEnd(r).error).toContain('MCP server "fx" failed (handshake)');
    expect(agentEnd(r).error).toContain("FATAL missing FIXTURE_TOKEN");
  });

  it("a server that never answers the handshake: exit 1 after startupTimeoutMs", async () => {
    const { r } = await failingRun({ mcpServers: { fx: fixture("silent", { startupTimeoutMs: "700ms" }) } });
    expect(r.code).toBe(1);
    expect(server!.requests).toHaveLength(0);
    expect(agentEnd(r).error).toContain("did not answer the handshake within 700 ms");
  });

  it("a server that writes junk to stdout: exit 1, naming the line", async () => {
    const { r } = await failingRun({ mcpServers: { fx: fixture("junk") } });
    expect(r.code).toBe(1);
    expect(server!.requests).toHaveLength(0);
    expect(agentEnd(r).error).toContain("not a JSON-RPC message");
    expect(agentEnd(r).error).toContain("Starting fixture server v1.0");
  });

  it("an optional server that fails is an event; the run goes on without its tools", async () => {
    const { r } = await failingRun({ mcpServers: { fx: fixture("die", { required: false }), ok: fixture("ok") } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.events[0]).toMatchObject({ type: "agentStart" });
    expect((r.events[0] as Record<string, any>).mcpServers).toEqual([
      { name: "fx", transport: "stdio", status: "failed", required: false, tools: [] },
      expect.objectContaining({ name: "ok", status: "ready" }),
    ]);
    expect(r.events.find((e) => e.type === "mcpServerError")).toMatchObject({ server: "fx", required: false });
    const offered = server!.requests[0].tools.map((t: { function: { name: string } }) => t.function.name);
    expect(offered).toContain("mcp__ok__hello");
    expect(offered.some((n: string) => n.startsWith("mcp__fx__"))).toBe(false);
  });

  it("a program that exists but cannot be run: exit 1, phase spawn", async () => {
    const { r, dir } = await failingRun({ mcpServers: { fx: { command: ["./not-executable.sh"] } } }, [], async (d) => writeFile(join(d, "not-executable.sh"), "#!/bin/sh\n", { mode: 0o644 }));
    expect(r.code).toBe(1);
    expect(server!.requests).toHaveLength(0);
    expect(r.events[0]).toMatchObject({ type: "mcpServerError", server: "fx", phase: "spawn" });
    expect(agentEnd(r).error).toContain(`command is not executable: ${join(dir, "not-executable.sh")}`);
  });

  it("--no-spec-mcp ignores the spec's servers", async () => {
    const { r } = await failingRun({ mcpServers: { fx: fixture("die") } }, ["--no-spec-mcp"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.events.some((e) => e.type === "mcpServerError")).toBe(false);
  });
});
