/** Spec hooks: command hooks (real child processes) and module hooks (TS through the tool module loader). */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSpecHooks } from "../../src/hooks/index.js";
import { defineTool, textContent } from "../../src/tools/define.js";
import { liveProcessGroups } from "../../src/tools/process.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { runAgent } from "../../src/loop/run-agent.js";
import { createScriptedProvider } from "../../src/provider/scripted.js";
import type { AfterToolCallContext, AgentEvent, AgentHooks, BeforeToolCallContext } from "../../src/loop/types.js";
import type { Tool, ToolResult } from "../../src/tools/types.js";

const HOOKS = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "hooks");
const hookFile = (name: string) => join(HOOKS, name);
const node = (script: string) => ({ command: [process.execPath, hookFile(script)] });

beforeAll(() => {
  process.env.YIEM_KILL_GRACE_MS = "200";
});
afterAll(() => {
  delete process.env.YIEM_KILL_GRACE_MS;
});

const tool = (name: string): Tool => defineTool({
  name, label: name, description: name, inputSchema: { type: "object" },
  execute: async (_id, args: Record<string, unknown>) => ({ content: [textContent(`${name} ran with ${JSON.stringify(args)}`)] }),
});

function beforeCtx(toolName: string, args: Record<string, unknown>, signal = new AbortController().signal): BeforeToolCallContext {
  return { turn: 1, toolCall: { id: "call_9", name: toolName, arguments: JSON.stringify(args) }, tool: tool(toolName), args, signal };
}

function afterCtx(toolName: string, result: ToolResult, isError = false): AfterToolCallContext {
  return { ...beforeCtx(toolName, { q: 1 }), result, isError };
}

const resultOf = (text: string): ToolResult => ({ content: [textContent(text)] });

describe("command hooks: beforeToolCall", () => {
  it("exit 2 blocks with the trimmed stderr as the reason; exit 0 allows", async () => {
    const hooks = await loadSpecHooks({ beforeToolCall: { command: [hookFile("block.sh")] } });
    expect(await hooks.beforeToolCall!(beforeCtx("danger", {}))).toEqual({ block: true, reason: "danger is blocked by the site policy" });
    expect(await hooks.beforeToolCall!(beforeCtx("safe", {}))).toBeUndefined();
  });

  it("the model sees the reason when a call is blocked by exit 2", async () => {
    const hooks = await loadSpecHooks({ beforeToolCall: { command: [hookFile("block.sh")] } });
    const registry = new ToolRegistry();
    registry.register(tool("danger"));
    const provider = createScriptedProvider([{ toolCalls: [{ name: "danger", arguments: {} }] }, { content: "ok" }]);
    const events: AgentEvent[] = [];
    await runAgent({ provider, registry, hooks, messages: [{ role: "user", content: "go" }], onEvent: (e) => events.push(e) });
    const toolMessage = provider.requests[1].messages.find((m) => m.role === "tool");
    expect(toolMessage).toMatchObject({ isError: true, content: [{ type: "text", text: "Tool call blocked: danger is blocked by the site policy" }] });
    expect(events.filter((e) => e.type === "toolCallRejected")).toHaveLength(1);
    expect(events.some((e) => e.type === "toolExecutionStart")).toBe(false);
  });

  it("stdout {args} replaces the arguments, and the hook receives the call on stdin", async () => {
    const hooks = await loadSpecHooks({ beforeToolCall: node("rewrite-args.mjs") });
    expect(await hooks.beforeToolCall!(beforeCtx("weather", { city: "paris", days: 2 }))).toEqual({ args: { city: "PARIS", days: 2 } });
  });

  it("any other exit blocks with a reason naming the hook and the exit code", async () => {
    const hooks = await loadSpecHooks({ beforeToolCall: { command: [hookFile("fail.sh")] } });
    await expect(hooks.beforeToolCall!(beforeCtx("safe", {}))).rejects.toThrow(/beforeToolCall hook "fail\.sh" failed with exit code 1: hook exploded/);
  });

  it("a timeout is a failure and kills the hook's process group", async () => {
    const hooks = await loadSpecHooks({ beforeToolCall: { command: [hookFile("slow.sh")], timeoutMs: 300 } });
    await expect(hooks.beforeToolCall!(beforeCtx("safe", {}))).rejects.toThrow(/beforeToolCall hook "slow\.sh" timed out after 300 ms/);
    expect(liveProcessGroups()).toEqual([]);
  });

  it("relative command paths resolve against opts.cwd", async () => {
    const hooks = await loadSpecHooks({ beforeToolCall: { command: ["./block.sh"] } }, { cwd: HOOKS });
    expect(await hooks.beforeToolCall!(beforeCtx("danger", {}))).toMatchObject({ block: true });
  });
});

describe("command hooks: afterToolCall", () => {
  it("stdout JSON replaces content, isError and details; the hook gets result and isError", async () => {
    const hooks = await loadSpecHooks({ afterToolCall: node("rewrite-result.mjs") });
    expect(await hooks.afterToolCall!(afterCtx("lookup", resultOf("it did fail"), false))).toEqual({
      content: [{ type: "text", text: "audited(afterToolCall,lookup,false): it did fail" }],
      isError: true,
      details: { audited: true },
    });
  });

  it("a rewritten result reaches the model through the loop", async () => {
    const hooks = await loadSpecHooks({ afterToolCall: node("rewrite-result.mjs") });
    const registry = new ToolRegistry();
    registry.register(tool("lookup"));
    const provider = createScriptedProvider([{ toolCalls: [{ name: "lookup", arguments: { q: "x" } }] }, { content: "ok" }]);
    await runAgent({ provider, registry, hooks, messages: [{ role: "user", content: "go" }] });
    const toolMessage = provider.requests[1].messages.find((m) => m.role === "tool");
    expect(toolMessage).toMatchObject({
      isError: false,
      content: [{ type: "text", text: 'audited(afterToolCall,lookup,false): lookup ran with {"q":"x"}' }],
    });
  });

  it("a non-zero exit is a failure (the loop makes it an error result)", async () => {
    const hooks = await loadSpecHooks({ afterToolCall: { command: [hookFile("fail.sh")] } });
    await expect(hooks.afterToolCall!(afterCtx("lookup", resultOf("x")))).rejects.toThrow(/afterToolCall hook "fail\.sh" failed with exit code 1/);
  });

  it("a timeout is a failure", async () => {
    const hooks = await loadSpecHooks({ afterToolCall: { command: [hookFile("slow.sh")], timeoutMs: 300 } });
    await expect(hooks.afterToolCall!(afterCtx("lookup", resultOf("x")))).rejects.toThrow(/timed out after 300 ms/);
  });

  it("stdout that is not JSON is a failure with a clear message", async () => {
    const hooks = await loadSpecHooks({ afterToolCall: { command: ["bash", "-c", "cat >/dev/null; echo looks fine"] } });
    await expect(hooks.afterToolCall!(afterCtx("lookup", resultOf("x")))).rejects.toThrow(/not JSON/);
  });
});

describe("module hooks", () => {
  let hooks: AgentHooks;
  beforeAll(async () => {
    hooks = await loadSpecHooks({ beforeToolCall: hookFile("policy.ts"), afterToolCall: hookFile("policy.ts") });
  });

  it("blocks with a reason", async () => {
    expect(await hooks.beforeToolCall!(beforeCtx("danger", {}))).toEqual({ block: true, reason: "the module policy says no" });
  });

  it("rewrites args", async () => {
    expect(await hooks.beforeToolCall!(beforeCtx("weather", { city: "oslo" }))).toEqual({ args: { city: "OSLO" } });
  });

  it("rewrites a result", async () => {
    expect(await hooks.afterToolCall!(afterCtx("lookup", resultOf("42")))).toEqual({
      content: [{ type: "text", text: "module saw: 42" }],
      terminate: true,
    });
  });

  it("a relative module path resolves against opts.cwd", async () => {
    const relative = await loadSpecHooks({ beforeToolCall: "./policy.ts" }, { cwd: HOOKS });
    expect(await relative.beforeToolCall!(beforeCtx("danger", {}))).toMatchObject({ block: true });
  });

  it("times out (and aborts the hook's signal)", async () => {
    const slow = await loadSpecHooks({ beforeToolCall: hookFile("hang.ts") }, { timeoutMs: 200 });
    await expect(slow.beforeToolCall!(beforeCtx("safe", {}))).rejects.toThrow(/beforeToolCall hook "hang\.ts" timed out after 200 ms/);
  });

  it("a module without the hook, or a missing file, fails to load with the hook named", async () => {
    await expect(loadSpecHooks({ afterToolCall: hookFile("before-only.ts") })).rejects.toThrow(/hooks\.afterToolCall: .*before-only\.ts must default-export/);
    await expect(loadSpecHooks({ beforeToolCall: hookFile("nope.ts") })).rejects.toThrow(/hooks\.beforeToolCall: cannot load/);
    await expect(loadSpecHooks({ beforeToolCall: { command: [] } })).rejects.toThrow(/hooks\.beforeToolCall\.command/);
  });
});
