/**
 * The run stream's own `agentEnd` (src/cli/events/run-stream.ts `close()`): its totals are the
 * finished turns' usage plus the open turn's model usage, counted with the loop's usage rules.
 */
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/loop/types.js";
import { createRunStream } from "../../../src/cli/events/run-stream.js";

const usage = (promptTokens: number, completionTokens: number) => ({ promptTokens, completionTokens, totalTokens: promptTokens + completionTokens });

describe("createRunStream close()", () => {
  it("ends an interrupted run with the summed usage, the open turn closed and every call answered", () => {
    const written: Array<Record<string, unknown>> = [];
    const stream = createRunStream("run-1", (event) => written.push(event as unknown as Record<string, unknown>));
    let seq = 0;
    const emit = (body: Record<string, unknown>) =>
      stream.emit({ runId: "run-1", seq: ++seq, ts: new Date().toISOString(), ...body } as unknown as AgentEvent);
    const call = { id: "c1", name: "slow", arguments: "{}" };

    emit({ type: "turnStart", turn: 1 });
    emit({ type: "messageEnd", turn: 1, message: { role: "assistant", content: "", toolCalls: [] }, usage: usage(10, 5) });
    emit({ type: "turnEnd", turn: 1, toolResults: 0, usage: usage(10, 5) });
    emit({ type: "turnStart", turn: 2 });
    emit({ type: "messageEnd", turn: 2, message: { role: "assistant", content: "", toolCalls: [call] }, usage: usage(7, 3) });
    emit({ type: "toolExecutionStart", turn: 2, toolCallId: "c1", toolName: "slow", args: {} });
    stream.close("timeout", "run timed out after 50 ms");
    expect(stream.ended).toBe(true);
    expect(stream.finish()).toBe("timeout");

    const tail = written.slice(-3);
    expect(tail.map((e) => e.type)).toEqual(["toolExecutionEnd", "turnEnd", "agentEnd"]);
    expect(tail[0]).toMatchObject({ toolCallId: "c1", isError: true });
    expect(tail[1]).toMatchObject({ turn: 2, toolResults: 1, usage: usage(7, 3) });
    expect(tail[2]).toMatchObject({ stopReason: "timeout", turns: 2, toolCalls: 1, usage: usage(17, 8), error: "run timed out after 50 ms" });
    expect(written.map((e) => e.seq)).toEqual(written.map((_, i) => i + 1));
  });

  it("a run that never started ends with zero usage", () => {
    const written: Array<Record<string, unknown>> = [];
    const stream = createRunStream("run-2", (event) => written.push(event as unknown as Record<string, unknown>));
    stream.close("aborted", "run aborted");
    stream.finish();
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({ type: "agentEnd", seq: 1, turns: 0, toolCalls: 0, usage: usage(0, 0) });
  });
});
