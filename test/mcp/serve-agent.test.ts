/**
 * The agent tool of `yiem mcp serve --agent [NAME]` with a scripted model: `{prompt, stdin?}` →
 * the final answer, stopReason/usage in `_meta`, progress per turn, a failed run as an isError
 * result, concurrent calls as separate runs that share no state, the Inspector CLI calling it,
 * and yiem against itself: a `yiem run` whose spec lists `yiem mcp serve -c other.yaml` as an MCP
 * server, delegating to the inner agent.
 */
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer, type ReceivedRequest } from "../support/chat-server.js";
import { assertEventStream, yiemBin } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";
import { inspector, serveEnv, serveProject, serveRuns, serveV2, yiemServe, type Served } from "../support/mcp-serve.js";

const dirs: string[] = [];
const servers: Served[] = [];
let model: ChatServer | undefined;
afterEach(async () => {
  for (const s of servers.splice(0)) await s.client.close().catch(() => {});
  await model?.close();
  model = undefined;
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

type Message = { role: string; content: string | null };
const userText = (r: ReceivedRequest) => String((r.body.messages as Message[]).find((m) => m.role === "user")?.content ?? "");
const toolResults = (r: ReceivedRequest) => (r.body.messages as Message[]).filter((m) => m.role === "tool").map((m) => String(m.content));
const text = (result: unknown) => (((result as { content?: unknown }).content ?? []) as Array<{ text?: string }>).map((p) => p.text ?? "").join("\n");

/**
 * A model that, for a user message starting with WORD, first calls `slow` (WORD's length × 100
 * ms), then answers `WORD done after: <the tool's text>`; its usage depends on WORD, so a run
 * that counted another run's tokens shows.
 */
function wordModel(): (r: ReceivedRequest) => ReturnType<typeof reply.json> {
  return (r) => {
    const word = userText(r).split(/\s+/)[0];
    const usage = { prompt_tokens: word.length * 10, completion_tokens: word.length };
    const results = toolResults(r);
    if (results.length === 0) return reply.json({ toolCalls: [{ id: `call_${word}`, name: "slow", arguments: JSON.stringify({ ms: word.length * 100 }) }], usage });
    return reply.json({ content: `${word} done after: ${results.join(" | ")}`, usage });
  };
}

async function project(spec: Record<string, unknown> = {}) {
  const dir = await serveProject(spec);
  dirs.push(dir);
  return dir;
}
async function serve(dir: string, args: string[]) {
  const served = await serveV2(dir, args, { TEST_BASE_URL: model!.url });
  servers.push(served);
  return served;
}

describe("the agent tool (--agent)", { timeout: 120_000 }, () => {
  it("runs the whole loop on {prompt, stdin}: the answer, stopReason and usage in _meta, progress per turn, its own run events", async () => {
    model = await startChatServer(wordModel());
    const dir = await project();
    const s = await serve(dir, ["--agent", "helper"]);
    const tools = (await s.client.listTools()).tools;
    const helper = tools.find((t) => t.name === "helper")!;
    expect(tools.at(-1)?.name).toBe("helper");
    expect(helper.inputSchema).toMatchObject({ type: "object", required: ["prompt"], properties: { prompt: { type: "string" }, stdin: { type: "string" } } });
    const progress: string[] = [];
    const result = await s.client.callTool({ name: "helper", arguments: { prompt: "alpha please", stdin: "some context" } }, { onprogress: (p) => progress.push(String(p.message)) });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe("alpha done after: waited 500 ms");
    expect(result._meta).toMatchObject({ stopReason: "completed", turns: 2, toolCalls: 1, usage: { promptTokens: 100, completionTokens: 10, totalTokens: 110 }, runId: expect.any(String) });
    expect(progress).toEqual(["turn 1", "turn 1: calling slow", "turn 2"]);
    // The prompt reached the model as `yiem run "alpha please" < context` builds it.
    expect(model.requests[0].messages).toEqual([{ role: "system", content: "You are a test agent." }, { role: "user", content: "alpha please\n\nsome context" }]);
    // The agent does not see itself among its tools.
    expect((model.requests[0].tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).not.toContain("helper");
    expect(await s.close()).toBe(0);
    const { session, runs } = serveRuns(s.stderr());
    const agentRun = runs.get(String((result._meta as { runId: string }).runId))!;
    expect(agentRun[0]).toMatchObject({ type: "agentStart", model: "test-model" });
    expect(agentRun.at(-1)).toMatchObject({ type: "agentEnd", stopReason: "completed", turns: 2 });
    expect(session[0]).toMatchObject({ type: "agentStart", model: "test-model", serve: { transport: "stdio", agentTool: "helper" } });
    expect(session.at(-1)).toMatchObject({ type: "agentEnd", toolCalls: 1, usage: { totalTokens: 110 } });
    model.assertClean();
  });

  it("a run that fails is an isError result saying how it ended; invalid arguments are rejected before any model call", async () => {
    model = await startChatServer([reply.error(400, "the model is gone")]);
    const dir = await project();
    const s = await serve(dir, ["--agent"]);
    expect((await s.client.listTools()).tools.map((t) => t.name)).toContain("agent");
    const failed = await s.client.callTool({ name: "agent", arguments: { prompt: "beta" } });
    expect(failed.isError).toBe(true);
    expect(text(failed)).toMatch(/^The agent run ended with stopReason "error": .*the model is gone/);
    expect(failed._meta).toMatchObject({ stopReason: "error", turns: 1 });
    const invalid = await s.client.callTool({ name: "agent", arguments: { prompt: "", extra: 1 } });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toContain('Invalid arguments for tool "agent"');
    expect(model.requests).toHaveLength(1);
    await s.close();
  });

  it("concurrent calls are separate runs: their own answers, tool calls, usage, runIds and event sequences", async () => {
    model = await startChatServer(wordModel());
    const dir = await project();
    const s = await serve(dir, ["--agent", "helper"]);
    const words = ["ab", "cdef", "ghijkl"];
    const results = await Promise.all(words.map((word) => s.client.callTool({ name: "helper", arguments: { prompt: `${word} go` } })));
    results.forEach((result, i) => {
      const word = words[i];
      expect(text(result)).toBe(`${word} done after: waited ${word.length * 100} ms`);
      expect(result._meta).toMatchObject({ stopReason: "completed", turns: 2, toolCalls: 1, usage: { promptTokens: word.length * 20, completionTokens: word.length * 2 } });
    });
    const runIds = results.map((r) => (r._meta as { runId: string }).runId);
    expect(new Set(runIds).size).toBe(3);
    await s.close();
    const { runs } = serveRuns(s.stderr());
    for (const [i, runId] of runIds.entries()) {
      const events = runs.get(runId)!;
      assertEventStream(events);
      const calls = events.filter((e) => e.type === "toolExecutionStart");
      expect(calls.map((e) => [e.toolName, (e.args as { ms: number }).ms])).toEqual([["slow", words[i].length * 100]]);
      expect(events.filter((e) => e.type === "messageEnd")).toHaveLength(2);
    }
    // The runs overlapped (each one's tool started before the last one's model answered).
    expect(model.requests.length).toBe(6);
  });

  it("the Inspector CLI calls the agent tool", async () => {
    model = await startChatServer(wordModel());
    const dir = await project();
    const r = await inspector([...yiemServe("--agent", "helper"), "--method", "tools/call", "--tool-name", "helper", "--tool-arg", "prompt=zeta from inspector"], { cwd: dir, env: { TEST_BASE_URL: model.url } });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ content: [{ type: "text", text: "zeta done after: waited 400 ms" }], _meta: { stopReason: "completed", turns: 2 } });
  });
});

describe("yiem against itself", { timeout: 120_000 }, () => {
  it("a yiem run whose spec lists `yiem mcp serve -c other.yaml` calls the inner spec's tools and its agent", async () => {
    model = await startChatServer((r) => {
      const system = String((r.body.messages as Message[])[0].content);
      const results = toolResults(r);
      if (system.startsWith("You are the inner agent")) return reply.json({ content: `inner answer to: ${userText(r)}`, usage: { prompt_tokens: 3, completion_tokens: 2 } });
      if (results.length === 0) {
        return reply.json({ toolCalls: [{ id: "c1", name: "mcp__inner__upper", arguments: '{"text":"loud"}' }, { id: "c2", name: "mcp__inner__delegate", arguments: '{"prompt":"sub task"}' }], usage: { prompt_tokens: 5, completion_tokens: 5 } });
      }
      return reply.json({ content: `outer got: ${results.join(" + ")}`, usage: { prompt_tokens: 7, completion_tokens: 1 } });
    });
    const dir = await project({ systemPrompt: "You are the outer agent." });
    const inner = { name: "inner-agent", systemPrompt: "You are the inner agent.", model: { name: "inner-model", baseURL: "${TEST_BASE_URL}", apiKeyEnv: "TEST_API_KEY", maxRetries: 0, stream: false }, toolDirs: [join(dir, "..", "nothing-here")], builtinTools: [] };
    await writeFile(join(dir, "other.yaml"), JSON.stringify({ ...inner, toolDirs: [join(yiemBin, "..", "..", "test", "fixtures", "mcp-serve", "tools")] }));
    await writeFile(join(dir, "agent.config.yaml"), JSON.stringify({
      systemPrompt: "You are the outer agent.",
      model: { name: "outer-model", baseURL: "${TEST_BASE_URL}", apiKeyEnv: "TEST_API_KEY", maxRetries: 0, stream: false },
      builtinTools: [],
      mcpServers: { inner: { command: [process.execPath, yiemBin, "mcp", "serve", "-c", "other.yaml", "--agent", "delegate"], tools: { allow: ["upper", "delegate"] } } },
    }));
    const r = await runCli(["run", "go"], { cwd: dir, env: serveEnv({ TEST_BASE_URL: model.url }), timeoutMs: 90_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('outer got: {"TEXT":"LOUD"} + inner answer to: sub task\n');
    assertEventStream(r.events);
    expect(r.events.find((e) => e.type === "mcpServerReady")).toMatchObject({ server: "inner", serverInfo: { name: "yiem" }, tools: ["mcp__inner__upper", "mcp__inner__delegate"] });
    expect(model.requests.map((q) => q.model)).toEqual(["outer-model", "inner-model", "outer-model"]);
    model.assertClean();
  });
});
