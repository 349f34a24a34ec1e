/**
 * Battery: faults from the model server, through the real CLI against the scripted server.
 * Every run ends with exactly one agentEnd, a clear stop reason and the contract's exit code.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, streamChunks, type ChatReply, type ChatServer } from "../../support/chat-server.js";
import { eventsOf, expectRunEnded, signalWhen, writeSpec, yiem } from "../../fixtures/battery/harness.js";

let dir: string;
let spec: string;
let server: ChatServer | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "yiem-battery-model-"));
  spec = writeSpec(dir, "model-faults", { model: { maxRetries: 2 } });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const call = (id: string, name: string, args: string) => ({ id, name, arguments: args });
const toolMessagesSent = (s: ChatServer, request: number) =>
  s.requests[request].messages.filter((m: { role: string }) => m.role === "tool") as Array<{ tool_call_id: string; content: string }>;

describe("HTTP errors", () => {
  it("500 once then success: the run succeeds and one retry event is emitted", async () => {
    server = await startChatServer([reply.error(500, "transient failure"), reply.stream({ content: "recovered" })]);
    const r = await yiem(["run", "-c", spec, "hi"], { server });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    expect(r.stdout).toBe("recovered\n");
    const retries = eventsOf(r, "retry");
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ attempt: 1, status: 500 });
    expect(retries[0].message).toContain("transient failure");
    server.assertClean();
  });

  it("500 always (a new message each time): exit 1 after the configured retries, agentEnd error names the status, bounded wait", async () => {
    // A 500 that repeats its message stops after the second answer (cli-model-failures.test.ts).
    server = await startChatServer((_request, index) => reply.error(500, `permanently broken (request ${index + 1})`));
    const r = await yiem(["run", "-c", spec, "hi"], { server });
    const end = expectRunEnded(r, { code: 1, stopReason: "error" });
    expect(end.error).toMatch(/HTTP 500: permanently broken \(request 3\) \(after 3 attempts\)$/);
    expect(eventsOf(r, "retry").map((e) => e.attempt)).toEqual([1, 2]);
    expect(server.requests).toHaveLength(3);
    // Exponential backoff from 0.5 s: the whole run is over in a few seconds, never minutes.
    expect(end.durationMs).toBeLessThan(20_000);
    expect(r.stdout).toBe("");
  });

  it("429 with retry-after-ms: the delay is the server's", async () => {
    server = await startChatServer([reply.error(429, "slow down", { "retry-after-ms": "250" }), reply.json({ content: "after waiting" })]);
    const r = await yiem(["run", "-c", spec, "hi"], { server });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    expect(eventsOf(r, "retry")).toEqual([expect.objectContaining({ attempt: 1, status: 429, delayMs: 250 })]);
    expect(r.stdout).toBe("after waiting\n");
  });

  it("429 with retry-after: 3600 is capped at 30 s, and the wait is interruptible (SIGTERM → 143)", async () => {
    server = await startChatServer([reply.error(429, "come back in an hour", { "retry-after": "3600" }), reply.json({ content: "unused" })]);
    const r = await yiem(["run", "-c", spec, "hi"], { server, onSpawn: signalWhen('"type":"retry"', ["SIGTERM"]) });
    expectRunEnded(r, { code: 143, stopReason: "aborted" });
    expect(eventsOf(r, "retry")).toEqual([expect.objectContaining({ status: 429, delayMs: 30_000 })]);
    expect(server.requests).toHaveLength(1);
  });
});

describe("broken streams and silent servers", () => {
  it("an SSE stream cut before its end, before any text: retried, then the run succeeds", async () => {
    const turn = { content: "whole answer" };
    server = await startChatServer([reply.cut(turn, 1, "end"), reply.cut(turn, 1, "destroy"), reply.stream(turn)]);
    const r = await yiem(["run", "-c", spec, "hi"], { server });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    expect(r.stdout).toBe("whole answer\n");
    const retries = eventsOf(r, "retry");
    expect(retries).toHaveLength(2);
    expect(retries.every((e) => e.status === null && /stream/.test(e.message))).toBe(true);
    expect(server.requests).toHaveLength(3);
  });

  it("a connection reset mid-stream after text was emitted: no retry, a clean error (exit 1)", async () => {
    server = await startChatServer([reply.cut({ content: "half an answer that stops", textPieceSize: 5 }, 4, "destroy"), reply.stream({ content: "x" })]);
    const r = await yiem(["run", "-c", spec, "hi"], { server });
    const end = expectRunEnded(r, { code: 1, stopReason: "error" });
    expect(end.error).toMatch(/cut before it was complete|ended before it was complete/);
    expect(eventsOf(r, "retry")).toHaveLength(0);
    expect(eventsOf(r, "messageUpdate").map((e) => e.delta).join("")).toBe("half an answer ");
    expect(server.requests).toHaveLength(1);
    expect(r.stdout).toBe("");
  });

  it("a server that accepts the connection and never answers: the request timeout (model.timeoutMs) fires", async () => {
    server = await startChatServer([reply.hang(), reply.hang()]);
    const hung = writeSpec(dir, "hung", { model: { timeoutMs: "400ms", maxRetries: 1 } });
    const r = await yiem(["run", "-c", hung, "hi"], { server });
    const end = expectRunEnded(r, { code: 1, stopReason: "error" });
    expect(end.error).toContain("no response from the server for 400 ms");
    expect(eventsOf(r, "retry")).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });
});

describe("malformed responses", () => {
  const noChoicesJson: ChatReply = {
    kind: "json",
    validate: false,
    body: { id: "chatcmpl-empty", object: "chat.completion", created: 1, model: "test-model", choices: [] },
  };
  const noChoicesStream: ChatReply = {
    kind: "sse",
    validate: false,
    chunks: [{ id: "chatcmpl-empty", object: "chat.completion.chunk", created: 1, model: "test-model", choices: [], usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 } }],
  };

  for (const [label, empty] of [["JSON", noChoicesJson], ["SSE", noChoicesStream]] as const) {
    it(`an empty choices array (${label}): a clear error, not an empty answer`, async () => {
      server = await startChatServer([empty, empty, empty]);
      const r = await yiem(["run", "-c", spec, "hi"], { server });
      const end = expectRunEnded(r, { code: 1, stopReason: "error" });
      expect(end.error).toContain("no choices");
      expect(r.stdout).toBe("");
    });
  }

  it("a missing finish reason (streamed with tool calls, then JSON): treated as unknown, the run completes", async () => {
    const jsonNoFinish = reply.json({ content: "final words" }) as Extract<ChatReply, { kind: "json" }>;
    const body = jsonNoFinish.body as { choices: Array<Record<string, unknown>> };
    delete body.choices[0].finish_reason;
    server = await startChatServer([
      reply.stream({ toolCalls: [call("c1", "echo", '{"text":"ping"}')], finishReason: null }),
      { ...jsonNoFinish, validate: false },
    ]);
    const r = await yiem(["run", "-c", spec, "hi"], { server });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    expect(r.stdout).toBe("final words\n");
    expect(eventsOf(r, "messageEnd").map((e) => e.finishReason)).toEqual(["unknown", "unknown"]);
    expect(eventsOf(r, "toolExecutionEnd")).toEqual([expect.objectContaining({ toolCallId: "c1", isError: false })]);
  });

  it('finish_reason "length" with half a tool call: not executed, an error result goes back, the run goes on', async () => {
    const chunks = streamChunks({ toolCalls: [call("cut1", "echo", '{"text":"the argument stops he')], finishReason: "length" });
    server = await startChatServer([{ kind: "sse", chunks }, reply.json({ content: "shorter now" })]);
    const r = await yiem(["run", "-c", spec, "hi"], { server });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    expect(eventsOf(r, "toolExecutionStart")).toHaveLength(0);
    expect(eventsOf(r, "toolCallRejected")).toEqual([expect.objectContaining({ toolCallId: "cut1", reason: expect.stringContaining("length limit") })]);
    expect(toolMessagesSent(server, 1)[0]).toMatchObject({ tool_call_id: "cut1", content: expect.stringContaining("length limit") });
  });

  it("tool call arguments that are not JSON: a rejected call with the parse error, the run goes on", async () => {
    server = await startChatServer([
      reply.stream({ toolCalls: [call("bad", "echo", "{text: 'single quotes', }"), call("good", "echo", '{"text":"fine"}')] }),
      reply.json({ content: "fixed it" }),
    ]);
    const r = await yiem(["run", "-c", spec, "hi"], { server });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    const [rejected] = eventsOf(r, "toolCallRejected");
    expect(rejected).toMatchObject({ toolCallId: "bad", toolName: "echo", args: "{text: 'single quotes', }" });
    expect(rejected.reason).toContain("not valid JSON");
    expect(eventsOf(r, "toolExecutionEnd")).toEqual([expect.objectContaining({ toolCallId: "good", isError: false })]);
    expect(toolMessagesSent(server, 1).map((m) => m.tool_call_id)).toEqual(["bad", "good"]);
  });

  it("a tool name that does not exist: rejected with the list of available tools", async () => {
    server = await startChatServer([reply.json({ toolCalls: [call("ghost", "rm_rf_everything", "{}")] }), reply.json({ content: "ok then" })]);
    const r = await yiem(["run", "-c", spec, "hi"], { server });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    const [rejected] = eventsOf(r, "toolCallRejected");
    expect(rejected.reason).toMatch(/Unknown tool "rm_rf_everything"\. Available tools: .*echo/);
    expect(eventsOf(r, "toolExecutionStart")).toHaveLength(0);
    expect(toolMessagesSent(server, 1)[0].content).toContain("Unknown tool");
  });

  it("50 tool calls in one response: 50 results, in call order", async () => {
    const calls = Array.from({ length: 50 }, (_, i) => call(`m${i}`, "echo", JSON.stringify({ n: i })));
    server = await startChatServer([reply.stream({ toolCalls: calls, argumentPieceSize: 3 }), reply.json({ content: "all done" })]);
    const r = await yiem(["run", "-c", spec, "--tool-execution", "parallel", "hi"], { server });
    const end = expectRunEnded(r, { code: 0, stopReason: "completed" });
    expect(end.toolCalls).toBe(50);
    expect(eventsOf(r, "toolExecutionEnd").filter((e) => !e.isError)).toHaveLength(50);
    const sent = toolMessagesSent(server, 1);
    expect(sent.map((m) => m.tool_call_id)).toEqual(calls.map((c) => c.id));
    expect(sent.map((m) => m.content)).toEqual(calls.map((_, i) => `n=${i}`));
    server.assertClean();
  });
});
