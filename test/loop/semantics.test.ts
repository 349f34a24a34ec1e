/**
 * Seed fidelity in the loop: loop detection across turns only, afterToolCall and
 * usage, parallelToolExecute in sequential mode, and listTools under the run's policy.
 */
import { describe, expect, it } from "vitest";
import { createBuiltinTools } from "../../src/tools/builtins/index.js";
import { defineTool, textContent, toolResult } from "../../src/tools/define.js";
import { createToolPolicy } from "../../src/tools/policy.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { echoTool, gateTool, registryOf, runScripted, textOf, toolMessages } from "../support/loop.js";

const same = (id: string) => ({ id, name: "echo", arguments: '{"text":"same"}' });

describe("loop detection counts repeats across turns only", () => {
  it("5 identical calls in one response run, and the run goes on", async () => {
    const { result, ofType } = await runScripted(
      [{ toolCalls: [same("a"), same("b"), same("c"), same("d"), same("e")] }, { content: "all five done" }],
      [echoTool()],
    );
    expect(result).toMatchObject({ stopReason: "completed", text: "all five done" });
    expect(ofType("toolExecutionStart")).toHaveLength(5);
    expect(ofType("toolCallRejected")).toHaveLength(0);
  });

  it("many identical calls per turn count once per turn: 4 turns of 3 pass the default limit of 5", async () => {
    const turn = (t: number) => ({ toolCalls: [same(`${t}a`), same(`${t}b`), same(`${t}c`)] });
    const { result, ofType } = await runScripted([turn(1), turn(2), turn(3), turn(4), { content: "fine" }], [echoTool()]);
    expect(result.stopReason).toBe("completed");
    expect(ofType("toolExecutionStart")).toHaveLength(12);
  });

  it("the same call in 5 turns in a row stops the run, also when each turn repeats it", async () => {
    const turn = (t: number) => ({ toolCalls: [same(`${t}a`), same(`${t}b`)] });
    const { result, ofType } = await runScripted([1, 2, 3, 4, 5, 6].map(turn), [echoTool()]);
    expect(result.stopReason).toBe("loopDetected");
    expect(result.turns).toBe(5);
    expect(ofType("toolExecutionStart")).toHaveLength(8);
    expect(ofType("toolCallRejected").map((e) => e.reason)).toEqual([
      "Not executed: the same call was made in 5 turns in a row.",
      "Not executed: the same call was made in 5 turns in a row.",
    ]);
    expect(result.error).toMatch(/"echo" called 5 times in a row/);
  });

  it("a turn without the call starts its count over, even when another call sits beside it", async () => {
    const other = { id: "o", name: "echo", arguments: '{"text":"other"}' };
    const turns = [
      { toolCalls: [same("1")] },
      { toolCalls: [same("2"), other] },
      { toolCalls: [other] },
      { toolCalls: [same("4")] },
      { toolCalls: [same("5")] },
      { content: "no loop" },
    ];
    const { result } = await runScripted(turns, [echoTool()], { limits: { loopDetection: 3 } });
    expect(result).toMatchObject({ stopReason: "completed", text: "no loop" });
  });
});

describe("afterToolCall and usage", () => {
  const spender = (extra: Record<string, unknown> = {}) =>
    defineTool({ ...echoTool("spender"), execute: async () => toolResult("spent", { usage: { promptTokens: 7, completionTokens: 3 }, ...extra }) });

  it("afterToolCall may set usage: it replaces the tool's and counts in the run and the turn", async () => {
    const { result, ofType } = await runScripted(
      [{ toolCalls: [{ id: "a", name: "spender", arguments: "{}" }], usage: { promptTokens: 1, completionTokens: 1 } }, { content: "ok" }],
      [spender()],
      { hooks: { afterToolCall: () => ({ usage: { promptTokens: 100, completionTokens: 20 } }) } },
    );
    expect(result.usage).toEqual({ promptTokens: 101, completionTokens: 21, totalTokens: 122 });
    expect(ofType("turnEnd")[0].usage).toEqual({ promptTokens: 101, completionTokens: 21, totalTokens: 122 });
  });

  it("a throwing afterToolCall keeps the tool's usage and terminate", async () => {
    const { result, ofType, provider } = await runScripted(
      [{ toolCalls: [{ id: "a", name: "spender", arguments: "{}" }] }, { content: "never asked" }],
      [spender({ terminate: true, details: { secretish: 1 } })],
      {
        hooks: {
          afterToolCall: () => {
            throw new Error("audit down");
          },
        },
      },
    );
    expect(result.stopReason).toBe("terminated");
    expect(provider.requests).toHaveLength(1);
    expect(result.usage).toMatchObject({ promptTokens: 7, completionTokens: 3 });
    const end = ofType("toolExecutionEnd")[0];
    expect(end).toMatchObject({ isError: true, result: { content: [{ type: "text", text: "afterToolCall hook failed: audit down" }] } });
    expect(end.result.details).toBeUndefined();
  });

  it("afterToolCall content that is invalid also keeps the tool's usage and terminate", async () => {
    const { result } = await runScripted(
      [{ toolCalls: [{ id: "a", name: "spender", arguments: "{}" }] }, { content: "never asked" }],
      [spender({ terminate: true })],
      { hooks: { afterToolCall: () => ({ content: [{ type: "video" }] as never }) } },
    );
    expect(result.stopReason).toBe("terminated");
    expect(result.usage.totalTokens).toBe(10);
    expect(textOf(toolMessages(result.messages)[0].content)).toMatch(/afterToolCall hook returned invalid content/);
  });

  it("a hook that changes other fields leaves the tool's usage alone", async () => {
    const { result } = await runScripted(
      [{ toolCalls: [{ id: "a", name: "spender", arguments: "{}" }] }, { content: "ok" }],
      [spender()],
      { hooks: { afterToolCall: () => ({ content: [textContent("audited")] }) } },
    );
    expect(result.usage.totalTokens).toBe(10);
  });
});

describe("parallelToolExecute: true in sequential mode", () => {
  it("does not let calls overlap: sequential runs one call at a time whatever the flag says", async () => {
    const log: string[] = [];
    const flagged = gateTool("g", log, 15, { parallelToolExecute: true });
    const calls = [1, 2, 3].map((n) => ({ id: `g${n}`, name: "g", arguments: "{}" }));
    await runScripted([{ toolCalls: calls }, { content: "ok" }], [flagged], { toolExecution: "sequential" });
    expect(log).toEqual(["start:g1", "end:g1", "start:g2", "end:g2", "start:g3", "end:g3"]);
  });
});

describe("listTools never lists a tool the run denies", () => {
  it("hides denied tools while the run lasts, and the registry offers them again after it", async () => {
    const registry = new ToolRegistry();
    for (const tool of createBuiltinTools(["listTools"], { registry, writeToolDir: null })) registry.register(tool, { kind: "builtin" });
    registry.register(echoTool("visible"));
    registry.register(echoTool("secretAdmin"));
    const { result, ofType } = await runScripted(
      [{ toolCalls: [{ id: "l", name: "listTools", arguments: "{}" }] }, { content: "ok" }],
      [],
      { registry, isToolAllowed: createToolPolicy(["*"], ["secret*"]) },
    );
    const listed = textOf(toolMessages(result.messages)[0].content);
    expect(listed).toContain("- visible: visible — echoes (visible)");
    expect(listed).not.toContain("secretAdmin");
    expect(ofType("toolExecutionEnd")[0].result.details).toEqual([
      { name: "listTools", label: "List tools", description: expect.any(String) },
      { name: "visible", label: "visible", description: "echoes (visible)" },
    ]);
    expect(ofType("agentStart")[0].tools).toEqual(["listTools", "visible"]);
    expect(registry.offered().map((t) => t.name)).toEqual(["listTools", "visible", "secretAdmin"]);
  });

  it("with two runs at once on one registry, each run's denials apply (never shown to either)", async () => {
    const registry = registryOf(echoTool("a"), echoTool("b"));
    const releaseA = registry.applyPolicy((n) => n !== "a");
    const releaseB = registry.applyPolicy((n) => n !== "b");
    expect(registry.offered()).toEqual([]);
    releaseA();
    expect(registry.offered().map((t) => t.name)).toEqual(["a"]);
    releaseB();
    expect(registry.offered().map((t) => t.name)).toEqual(["a", "b"]);
  });
});
