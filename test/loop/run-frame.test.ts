/**
 * The run frame (src/loop/run-frame.ts): the one place events are stamped and agentEnd is built.
 */
import { describe, expect, it } from "vitest";
import { createRunFrame } from "../../src/loop/run-frame.js";
import { runAgent } from "../../src/loop/run-agent.js";
import { createScriptedProvider } from "../../src/provider/scripted.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { AgentEvent } from "../../src/loop/types.js";

const usage = (promptTokens: number, completionTokens: number) => ({ promptTokens, completionTokens, totalTokens: promptTokens + completionTokens });

describe("createRunFrame", () => {
  it("stamps runId and a gap-free seq, and ends the run exactly once", () => {
    const events: AgentEvent[] = [];
    const frame = createRunFrame({ runId: "r1", sink: (e) => events.push(e) });
    frame.start({ yiemVersion: "1.0.0", model: "m", tools: [], toolExecution: "sequential", configPath: null });
    frame.emit({ type: "warning", message: "w" });
    const first = frame.end({ stopReason: "completed", turns: 1 });
    const second = frame.end({ stopReason: "error", error: "late" });
    frame.close("aborted", "too late");
    frame.emit({ type: "warning", message: "after the end" });
    expect(second).toBe(first);
    expect(events.map((e) => [e.type, e.runId, e.seq])).toEqual([["agentStart", "r1", 1], ["warning", "r1", 2], ["agentEnd", "r1", 3]]);
    expect(events[0]).toMatchObject({ schemaVersion: 1 });
    expect(events[2]).toMatchObject({ stopReason: "completed", turns: 1, toolCalls: 0, usage: usage(0, 0) });
    expect(events[2]).not.toHaveProperty("error");
    expect(frame.ended).toBe(true);
  });

  it("an agentEnd body emitted goes through end(): still one agentEnd", () => {
    const events: AgentEvent[] = [];
    const frame = createRunFrame({ runId: "r2", sink: (e) => events.push(e) });
    frame.emit({ type: "agentEnd", stopReason: "error", turns: 0, toolCalls: 0, usage: usage(0, 0), durationMs: 0, error: "x" });
    frame.emit({ type: "agentEnd", stopReason: "completed", turns: 0, toolCalls: 0, usage: usage(0, 0), durationMs: 0 });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "agentEnd", seq: 1, stopReason: "error", error: "x" });
  });

  it("close() answers every open call, ends the open turn, then agentEnd with the frame's own counts", () => {
    const events: AgentEvent[] = [];
    const frame = createRunFrame({ runId: "r3", sink: (e) => events.push(e) });
    frame.emit({ type: "turnStart", turn: 1 });
    frame.emit({
      type: "messageEnd",
      turn: 1,
      message: { role: "assistant", content: "", toolCalls: [{ id: "a", name: "slow", arguments: "{}" }, { id: "b", name: "next", arguments: "{}" }] },
      usage: usage(4, 2),
      finishReason: "tool_calls",
    });
    frame.emit({ type: "toolExecutionStart", turn: 1, toolCallId: "a", toolName: "slow", args: {} });
    frame.close("timeout", "run timed out after 5 ms");
    expect(events.map((e) => e.type)).toEqual(["turnStart", "messageEnd", "toolExecutionStart", "toolExecutionEnd", "toolCallRejected", "turnEnd", "agentEnd"]);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(events[6]).toMatchObject({ stopReason: "timeout", turns: 1, toolCalls: 2, usage: usage(4, 2), error: "run timed out after 5 ms" });
  });

  it("a sink that throws does not break the frame", () => {
    const frame = createRunFrame({ runId: "r4", sink: () => { throw new Error("broken"); } });
    expect(() => frame.emit({ type: "warning", message: "w" })).not.toThrow();
    expect(frame.end({ stopReason: "completed" }).stopReason).toBe("completed");
  });

  it("runAgent ends through a frame its caller opened, and the caller's later close() adds nothing", async () => {
    const events: AgentEvent[] = [];
    const frame = createRunFrame({ runId: "caller-run", sink: (e) => events.push(e) });
    const result = await runAgent({
      provider: createScriptedProvider([{ content: "done" }]),
      registry: new ToolRegistry(),
      messages: [{ role: "user", content: "hi" }],
      frame,
    });
    frame.close("aborted", "late signal");
    expect(result.runId).toBe("caller-run");
    expect(events.filter((e) => e.type === "agentEnd")).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "agentEnd", stopReason: "completed", runId: "caller-run" });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  });
});
