import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runAgent } from "../../src/loop/run-agent.js";
import type { AgentEvent } from "../../src/loop/types.js";
import { createScriptedProvider } from "../../src/provider/scripted.js";
import type { ToolResultMessage } from "../../src/provider/types.js";
import { createBuiltinTools } from "../../src/tools/builtins/index.js";
import { defineTool, toolResult } from "../../src/tools/define.js";
import { loadTools } from "../../src/tools/loader.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { Tool } from "../../src/tools/types.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-builtins-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function builtinRegistry(writeToolDir: string | null = join(dir, "tools")): { registry: ToolRegistry; byName: Record<string, Tool> } {
  const registry = new ToolRegistry();
  const tools = createBuiltinTools(["listTools", "writeTool"], { registry, writeToolDir });
  for (const tool of tools) registry.register(tool, { kind: "builtin" });
  return { registry, byName: Object.fromEntries(tools.map((t) => [t.name, t])) };
}

const signal = new AbortController().signal;
const noPartial = () => {};

const doubleDraft = {
  name: "double",
  label: "Double",
  description: "Doubles a number.",
  inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
  executeCode: "return toolResult(`doubled: ${args.n * 2}`, { details: { n: args.n } });",
};

describe("createBuiltinTools", () => {
  it("creates the named tools in the order named", () => {
    const registry = new ToolRegistry();
    expect(createBuiltinTools(["writeTool", "listTools"], { registry, writeToolDir: null }).map((t) => t.name)).toEqual(["writeTool", "listTools"]);
    expect(createBuiltinTools([], { registry, writeToolDir: null })).toEqual([]);
  });

  it("marks writeTool as never parallel", () => {
    const { byName } = builtinRegistry();
    expect(byName.writeTool.parallelToolExecute).toBe(false);
    expect(byName.listTools.parallelToolExecute).not.toBe(false);
  });
});

describe("listTools", () => {
  it("lists name, label and description of every tool, including ones added later", async () => {
    const { registry, byName } = builtinRegistry();
    registry.register(defineTool({ name: "multi", label: "Multi\nline", description: "first\n  second", inputSchema: { type: "object" }, execute: () => toolResult("x") }));
    const result = await byName.listTools.execute("c1", {}, signal, noPartial);
    const text = (result.content[0] as { text: string }).text;
    expect(text.split("\n")).toEqual([
      "Available tools:",
      expect.stringMatching(/^- listTools: List tools — /),
      expect.stringMatching(/^- writeTool: Write a tool — /),
      "- multi: Multi line — first second",
    ]);
    expect(result.details).toEqual(registry.list().map((t) => ({ name: t.name, label: t.label, description: t.description })));
  });
});

describe("writeTool", () => {
  it("writes the tool, registers it at once, and it runs", async () => {
    const { registry, byName } = builtinRegistry();
    const result = await byName.writeTool.execute("c1", { ...doubleDraft }, signal, noPartial);
    expect(result.details).toMatchObject({ name: "double", replaced: false });
    expect((result.content[0] as { text: string }).text).toMatch(/Wrote tool "double" .* next turn/);
    expect(registry.entry("double")?.source.kind).toBe("file");
    const tool = registry.get("double")!;
    expect(await tool.execute("c2", { n: 21 }, signal, noPartial)).toEqual({ content: [{ type: "text", text: "doubled: 42" }], details: { n: 21 } });
    expect(await readdir(join(dir, "tools"))).toEqual(["double.ts"]);
  });

  it("refuses to replace an existing tool without overwrite, and replaces it with overwrite", async () => {
    const { registry, byName } = builtinRegistry();
    await byName.writeTool.execute("c1", { ...doubleDraft }, signal, noPartial);
    await expect(byName.writeTool.execute("c2", { ...doubleDraft, label: "Twice" }, signal, noPartial)).rejects.toThrow(/already exists.*"overwrite": true/);
    const result = await byName.writeTool.execute("c3", { ...doubleDraft, label: "Twice", overwrite: true }, signal, noPartial);
    expect(result.details).toMatchObject({ replaced: true });
    expect(registry.get("double")!.label).toBe("Twice");
    expect(registry.list().filter((t) => t.name === "double")).toHaveLength(1);
  });

  it("never replaces a built-in", async () => {
    const { registry, byName } = builtinRegistry();
    for (const name of ["listTools", "writeTool"]) {
      await expect(byName.writeTool.execute("c", { ...doubleDraft, name, overwrite: true }, signal, noPartial)).rejects.toThrow(/built-in/);
    }
    expect(registry.entry("listTools")?.source.kind).toBe("builtin");
  });

  it("is an error without a folder to write to", async () => {
    const { byName } = builtinRegistry(null);
    await expect(byName.writeTool.execute("c", { ...doubleDraft }, signal, noPartial)).rejects.toThrow(/writeToolDir/);
  });
});

describe("writeTool in a run: the model writes a tool, then calls it on the next turn", () => {
  for (const mode of ["sequential", "parallel"] as const) {
    it(`works in ${mode} mode`, async () => {
      const { registry } = builtinRegistry();
      const provider = createScriptedProvider([
        { toolCalls: [{ name: "listTools", arguments: {} }, { name: "writeTool", arguments: doubleDraft }] },
        { toolCalls: [{ name: "double", arguments: { n: 4 } }, { name: "double", arguments: { n: "5" } }] },
        { content: "8 and 10" },
      ]);
      const events: AgentEvent[] = [];
      const result = await runAgent({
        provider,
        registry,
        messages: [{ role: "user", content: "write a doubling tool and use it" }],
        toolExecution: mode,
        onEvent: (e) => events.push(e),
      });
      expect(result.stopReason).toBe("completed");
      expect(result.text).toBe("8 and 10");
      // Turn 1 did not offer the tool; turn 2 did.
      expect(provider.requests[0].tools.map((t) => t.name)).not.toContain("double");
      expect(provider.requests[1].tools.map((t) => t.name)).toContain("double");
      // The new tool's results reached the model, in call order.
      const toolMessages = provider.requests[2].messages.filter((m): m is ToolResultMessage => m.role === "tool");
      const last = toolMessages.slice(-2);
      expect(last.map((m) => [m.toolName, m.isError, m.content])).toEqual([
        ["double", false, [{ type: "text", text: "doubled: 8" }]],
        ["double", false, [{ type: "text", text: "doubled: 10" }]],
      ]);
      expect(events.filter((e) => e.type === "toolCallRejected")).toEqual([]);
      const ends = events.filter((e): e is Extract<AgentEvent, { type: "toolExecutionEnd" }> => e.type === "toolExecutionEnd");
      expect(ends.map((e) => [e.toolName, e.isError])).toEqual([
        ["listTools", false],
        ["writeTool", false],
        ["double", false],
        ["double", false],
      ]);
      // The written file loads on its own too, as the next process would see it.
      const reloaded = await loadTools([join(dir, "tools")]);
      expect(reloaded.problems).toEqual([]);
      expect(reloaded.registry.has("double")).toBe(true);
    });
  }

  it("a failed writeTool call is an error result the model sees, and nothing is written", async () => {
    const { registry } = builtinRegistry();
    const provider = createScriptedProvider([
      { toolCalls: [{ name: "writeTool", arguments: { ...doubleDraft, executeCode: "return (;" } }] },
      { content: "gave up" },
    ]);
    const result = await runAgent({ provider, registry, messages: [{ role: "user", content: "go" }] });
    expect(result.stopReason).toBe("completed");
    const toolMessage = provider.requests[1].messages.find((m): m is ToolResultMessage => m.role === "tool")!;
    expect(toolMessage.isError).toBe(true);
    expect(JSON.stringify(toolMessage.content)).toMatch(/executeCode line 1/);
    expect(await readdir(join(dir, "tools")).catch(() => [])).toEqual([]);
  });
});
