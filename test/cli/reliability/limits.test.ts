/**
 * Battery: limits. Each limit stops the run with its own stop reason and exit 3 (the per-call
 * tool timeout is not a stop: the call gets an error result and the run goes on).
 * CLI runs use the real binary against the scripted server; loop rules use runAgent directly.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { defineTool, toolResult } from "../../../src/tools/define.js";
import { reply, startChatServer, type ChatServer } from "../../support/chat-server.js";
import { echoTool, runScripted, textOf, toolMessages } from "../../support/loop.js";
import { eventsOf, expectRunEnded, writeSpec, yiem } from "../../fixtures/battery/harness.js";

let dir: string;
let server: ChatServer | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "yiem-battery-limits-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const call = (id: string, name: string, args: object = {}) => ({ id, name, arguments: JSON.stringify(args) });

describe("limits through the CLI (exit 3)", () => {
  it("maxTurns from the spec: stopReason maxTurns after the last allowed turn's tools ran", async () => {
    server = await startChatServer((_req, i) => reply.json({ toolCalls: [call(`c${i}`, "echo", { n: i })] }));
    const spec = writeSpec(dir, "max-turns", { extra: ["limits: { maxTurns: 2 }"] });
    const r = await yiem(["run", "-c", spec, "loop forever"], { server });
    const end = expectRunEnded(r, { code: 3, stopReason: "maxTurns" });
    expect(end.turns).toBe(2);
    expect(eventsOf(r, "toolExecutionEnd")).toHaveLength(2);
    expect(server.requests).toHaveLength(2);
    expect(r.stdout).toBe("");
  });

  it("runTimeoutMs (--timeout 1s) stops a run whose model server hangs: stopReason timeout", async () => {
    server = await startChatServer([reply.hang()]);
    const spec = writeSpec(dir, "run-timeout", { model: { timeoutMs: "60s" } });
    const r = await yiem(["run", "-c", spec, "--timeout", "1s", "hello"], { server });
    const end = expectRunEnded(r, { code: 3, stopReason: "timeout" });
    expect(end.error).toMatch(/timed out after 1000 ms/);
    expect(server.requests).toHaveLength(1);
  });

  it("toolTimeoutMs (--tool-timeout) and a tool's own timeoutMs: error results, the run goes on", async () => {
    server = await startChatServer([
      reply.json({ toolCalls: [call("h", "hang"), call("s", "sleeper")] }),
      reply.json({ content: "carried on" }),
    ]);
    const spec = writeSpec(dir, "tool-timeout");
    const r = await yiem(["run", "-c", spec, "--tool-timeout", "600ms", "--tool-execution", "parallel", "go"], { server });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    expect(r.stdout).toBe("carried on\n");
    const ends = eventsOf(r, "toolExecutionEnd");
    expect(ends.map((e) => [e.toolCallId, e.isError])).toEqual([["s", true], ["h", true]]);
    const sent = server.requests[1].messages.filter((m: { role: string }) => m.role === "tool");
    expect(sent.map((m: { tool_call_id: string }) => m.tool_call_id)).toEqual(["h", "s"]);
    expect(sent[0].content).toContain("timed out after 600 ms");
    expect(sent[1].content).toContain("timed out after 200 ms");
  });

  it("maxTokens budget from the spec: stopReason budget, the response's calls are not executed", async () => {
    server = await startChatServer([
      reply.json({ toolCalls: [call("c1", "echo", { n: 1 })], usage: { prompt_tokens: 90, completion_tokens: 20 } }),
      reply.json({ content: "never asked" }),
    ]);
    const spec = writeSpec(dir, "budget", { extra: ["limits: { maxTokens: 100 }"] });
    const r = await yiem(["run", "-c", spec, "spend"], { server });
    const end = expectRunEnded(r, { code: 3, stopReason: "budget" });
    expect(end.error).toContain("110 > 100");
    expect(end.usage).toMatchObject({ totalTokens: 110 });
    expect(eventsOf(r, "toolExecutionStart")).toHaveLength(0);
    expect(eventsOf(r, "toolCallRejected")).toHaveLength(1);
    expect(server.requests).toHaveLength(1);
  });

  it("loop detection (limits.loopDetection 3): the same call 3 times in a row stops with loopDetected", async () => {
    server = await startChatServer((_req, i) => reply.json({ toolCalls: [call(`c${i}`, "echo", { text: "again" })] }));
    const spec = writeSpec(dir, "loop", { extra: ["limits: { loopDetection: 3, maxTurns: 10 }"] });
    const r = await yiem(["run", "-c", spec, "repeat"], { server });
    const end = expectRunEnded(r, { code: 3, stopReason: "loopDetected" });
    expect(end.error).toMatch(/"echo" called 3 times in a row/);
    expect(eventsOf(r, "toolExecutionStart")).toHaveLength(2);
    expect(eventsOf(r, "toolCallRejected")).toHaveLength(1);
  });
});

describe("limits in the loop", () => {
  it("a timed-out call's signal is aborted with the timeout as reason; later calls still run", async () => {
    const seen: AbortSignal[] = [];
    const stuck = defineTool({
      ...echoTool("stuck"),
      execute: (_id, _args, signal) => {
        seen.push(signal);
        return new Promise<never>(() => {});
      },
    });
    const quick = defineTool({ ...echoTool("quick"), timeoutMs: 30, execute: (_id, _a, signal) => (seen.push(signal), new Promise<never>(() => {})) });
    const { result, ofType } = await runScripted(
      [{ toolCalls: [call("a", "stuck"), call("b", "quick"), call("c", "echo", { text: "after" })] }, { content: "done" }],
      [stuck, quick, echoTool()],
      { limits: { toolTimeoutMs: 60 } },
    );
    expect(result.stopReason).toBe("completed");
    expect(seen.map((s) => s.aborted)).toEqual([true, true]);
    expect(String((seen[0].reason as Error).message)).toContain("timed out after 60 ms");
    expect(String((seen[1].reason as Error).message)).toContain("timed out after 30 ms");
    const results = toolMessages(result.messages);
    expect(results.map((m) => [m.toolCallId, m.isError])).toEqual([["a", true], ["b", true], ["c", false]]);
    expect(textOf(results[2].content)).toBe("echo:after");
    expect(ofType("agentEnd")).toHaveLength(1);
  });

  it("toolTimeoutMs 0 means no timeout, and a tool's own timeoutMs still applies", async () => {
    const slow = defineTool({ ...echoTool("slow"), execute: async () => (await new Promise((r) => setTimeout(r, 80)), toolResult("slow done")) });
    const capped = defineTool({ ...echoTool("capped"), timeoutMs: 20, execute: () => new Promise<never>(() => {}) });
    const { result } = await runScripted([{ toolCalls: [call("s", "slow"), call("c", "capped")] }, { content: "ok" }], [slow, capped], {
      limits: { toolTimeoutMs: 0 },
    });
    const results = toolMessages(result.messages);
    expect(results.map((m) => m.isError)).toEqual([false, true]);
    expect(textOf(results[0].content)).toBe("slow done");
  });

  it("loop detection defaults to 5 identical calls in a row, and 0 turns it off", async () => {
    const same = Array.from({ length: 7 }, () => ({ toolCalls: [call("x", "echo", { text: "same" })] }));
    const byDefault = await runScripted(same, [echoTool()]);
    expect(byDefault.result.stopReason).toBe("loopDetected");
    expect(byDefault.ofType("toolExecutionStart")).toHaveLength(4);
    expect(byDefault.ofType("agentEnd")).toHaveLength(1);
    const off = await runScripted([...same, { content: "finally" }], [echoTool()], { limits: { loopDetection: 0 } });
    expect(off.result).toMatchObject({ stopReason: "completed", text: "finally" });
    expect(off.ofType("toolExecutionStart")).toHaveLength(7);
  });

  it("loop detection counts arguments after normalising JSON, and a different call resets the count", async () => {
    const turns = [
      { toolCalls: [call("1", "echo", { text: "a", n: 1 })] },
      { toolCalls: [{ id: "2", name: "echo", arguments: '{ "text": "a",  "n": 1 }' }] },
      { toolCalls: [call("3", "echo", { text: "b" })] },
      { toolCalls: [call("4", "echo", { text: "a", n: 1 })] },
      { toolCalls: [call("5", "echo", { text: "a", n: 1 })] },
      { content: "no loop" },
    ];
    const run = await runScripted(turns, [echoTool()], { limits: { loopDetection: 3 } });
    expect(run.result).toMatchObject({ stopReason: "completed", text: "no loop" });
    const stopped = await runScripted(turns.slice(0, 2).concat(turns.slice(0, 1)), [echoTool()], { limits: { loopDetection: 3 } });
    expect(stopped.result.stopReason).toBe("loopDetected");
  });

  it("maxTokens counts cumulative usage, including usage reported by tools", async () => {
    const spender = defineTool({ ...echoTool("spender"), execute: async () => toolResult("spent", { usage: { promptTokens: 30, completionTokens: 10 } }) });
    const { result, provider, ofType } = await runScripted(
      [
        { toolCalls: [call("a", "spender")], usage: { promptTokens: 20, completionTokens: 5 } },
        { toolCalls: [call("b", "spender")], usage: { promptTokens: 20, completionTokens: 5 } },
        { content: "unused" },
      ],
      [spender],
      { limits: { maxTokens: 100 } },
    );
    // 25 + 40 (tool) = 65 after turn 1; 65 + 25 = 90 after turn 2's response, so b runs (130);
    // the check before turn 3 then stops the run without asking the model again.
    expect(provider.requests).toHaveLength(2);
    expect(ofType("toolExecutionEnd").map((e) => e.toolCallId)).toEqual(["a", "b"]);
    expect(result.usage.totalTokens).toBe(130);
    expect(result.stopReason).toBe("budget");
    expect(ofType("agentEnd")).toHaveLength(1);
  });

  it("runTimeoutMs while a tool ignores its abort signal: stopReason timeout, the call gets an error result", async () => {
    const deaf = defineTool({ ...echoTool("deaf"), execute: () => new Promise<never>(() => {}) });
    const { result, ofType } = await runScripted([{ toolCalls: [call("d", "deaf")] }, { content: "never" }], [deaf], {
      limits: { runTimeoutMs: 50, toolTimeoutMs: 0 },
    });
    expect(result.stopReason).toBe("timeout");
    expect(result.error).toContain("timed out after 50 ms");
    expect(toolMessages(result.messages).map((m) => m.isError)).toEqual([true]);
    expect(ofType("agentEnd")).toHaveLength(1);
    expect(ofType("agentEnd")[0].stopReason).toBe("timeout");
  });
});
