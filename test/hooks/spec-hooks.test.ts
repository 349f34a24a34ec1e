/**
 * The command-hook contract exactly as docs/tools.md ("Hooks") states it:
 * stdin keys, the environment (YIEM_HOOK, credentials removed), the spec's folder as the working
 * directory, exit 0 / exit 2 / anything else, the stdout keys of each hook, the 4000-character
 * reason, the reason of a silent exit 2, and the 30 s default timeout.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSpecHooks } from "../../src/hooks/index.js";
import { DEFAULT_HOOK_TIMEOUT_MS } from "../../src/hooks/types.js";
import { defineTool, textContent } from "../../src/tools/define.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { runAgent } from "../../src/loop/run-agent.js";
import { createScriptedProvider } from "../../src/provider/scripted.js";
import type { BeforeToolCallContext } from "../../src/loop/types.js";
import type { Tool } from "../../src/tools/types.js";
import { assertEventStream } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

const SECRET = "tok-hooks-5d1c9e7a2b";
let dir: string;

/** A hook whose behaviour is its first argument; it logs what it got to hook-log.ndjson in its working directory. */
const HOOK = `#!/usr/bin/env node
import { appendFileSync } from "node:fs";
let input = "";
for await (const chunk of process.stdin) input += chunk;
const mode = process.argv[2];
appendFileSync("hook-log.ndjson", JSON.stringify({
  mode, stdin: JSON.parse(input), yiemHook: process.env.YIEM_HOOK ?? null,
  token: process.env.HOOK_TEST_TOKEN ?? null, plain: process.env.HOOK_TEST_PLAIN ?? null, cwd: process.cwd(),
}) + "\\n");
const out = (value) => process.stdout.write(JSON.stringify(value));
switch (mode) {
  case "log": break;
  case "block-json": out({ block: true, reason: "the JSON says no" }); break;
  case "exit2-silent": process.exit(2);
  case "exit2-long": process.stderr.write("x".repeat(5000) + "\\n"); process.exit(2);
  case "unknown-key": out({ argz: {} }); break;
  case "wrong-type": out({ isError: "yes" }); break;
  case "after-string": out({ content: "replaced text", terminate: true }); break;
  default: process.stderr.write("unknown mode " + mode); process.exit(1);
}
`;

const echo: Tool = defineTool({
  name: "echo", label: "Echo", description: "Echoes.", inputSchema: { type: "object", properties: { text: { type: "string" } } },
  execute: async (_id, args: { text?: string }) => ({ content: [textContent(`echo: ${args.text ?? ""}`)], details: { n: 1 } }),
});

function ctx(args: Record<string, unknown> = { text: "hi" }): BeforeToolCallContext {
  return { turn: 3, toolCall: { id: "call_7", name: "echo", arguments: JSON.stringify(args) }, tool: echo, args, signal: new AbortController().signal };
}

function hookLog(folder = dir): Array<Record<string, unknown>> {
  const file = join(folder, "hook-log.ndjson");
  const lines = readFileSync(file, "utf8").trim().split("\n");
  rmSync(file);
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

const hooksFor = (before?: string, after?: string) =>
  loadSpecHooks(
    { ...(before ? { beforeToolCall: { command: ["./hook.mjs", before] } } : {}), ...(after ? { afterToolCall: { command: ["./hook.mjs", after] } } : {}) },
    { cwd: dir },
  );

async function runWith(before?: string, after?: string) {
  const registry = new ToolRegistry();
  registry.register(echo);
  const provider = createScriptedProvider([{ toolCalls: [{ name: "echo", arguments: { text: "hi" } }] }, { content: "done" }]);
  const result = await runAgent({ provider, registry, hooks: await hooksFor(before, after), messages: [{ role: "user", content: "go" }] });
  const toolMessage = provider.requests[1]?.messages.find((m) => m.role === "tool") as { content: Array<{ text: string }>; isError?: boolean } | undefined;
  return { result, toolMessage };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "yiem-fidelity-hooks-"));
  writeFileSync(join(dir, "hook.mjs"), HOOK, { mode: 0o755 });
  process.env.HOOK_TEST_TOKEN = SECRET;
  process.env.HOOK_TEST_PLAIN = "plain-value";
});

afterAll(() => {
  delete process.env.HOOK_TEST_TOKEN;
  delete process.env.HOOK_TEST_PLAIN;
  rmSync(dir, { recursive: true, force: true });
});

describe("what a command hook gets", () => {
  it("beforeToolCall: stdin {hook, turn, toolName, toolCallId, args}; YIEM_HOOK; credentials removed; runs in the given folder", async () => {
    const hooks = await hooksFor("log");
    expect(await hooks.beforeToolCall!(ctx({ text: "hi" }))).toBeUndefined();
    const [entry] = hookLog();
    expect(entry.stdin).toEqual({ hook: "beforeToolCall", turn: 3, toolName: "echo", toolCallId: "call_7", args: { text: "hi" } });
    expect(entry).toMatchObject({ yiemHook: "beforeToolCall", token: null, plain: "plain-value", cwd: dir });
  });

  it("afterToolCall: the same keys plus result {content, details} and isError", async () => {
    const hooks = await hooksFor(undefined, "log");
    const result = { content: [textContent("echo: hi")], details: { n: 1 }, usage: { promptTokens: 1 } };
    expect(await hooks.afterToolCall!({ ...ctx(), result, isError: false })).toBeUndefined();
    const [entry] = hookLog();
    expect(entry.stdin).toEqual({
      hook: "afterToolCall", turn: 3, toolName: "echo", toolCallId: "call_7", args: { text: "hi" },
      result: { content: [{ type: "text", text: "echo: hi" }], details: { n: 1 } },
      isError: false,
    });
    expect(entry.yiemHook).toBe("afterToolCall");
  });

  it("the default timeout is 30 s", () => {
    expect(DEFAULT_HOOK_TIMEOUT_MS).toBe(30_000);
  });
});

describe("what a command hook may answer", () => {
  it('beforeToolCall stdout {"block": true, "reason"} blocks with that reason', async () => {
    const { result, toolMessage } = await runWith("block-json");
    hookLog();
    expect(result.stopReason).toBe("completed");
    expect(toolMessage).toMatchObject({ isError: true, content: [{ text: "Tool call blocked: the JSON says no" }] });
  });

  it("exit 2 with nothing on stderr blocks with a reason naming the hook", async () => {
    const hooks = await hooksFor("exit2-silent");
    expect(await hooks.beforeToolCall!(ctx())).toEqual({ block: true, reason: 'blocked by the beforeToolCall hook "hook.mjs"' });
    hookLog();
  });

  it("exit 2's reason is at most 4000 characters", async () => {
    const hooks = await hooksFor("exit2-long");
    expect(await hooks.beforeToolCall!(ctx())).toEqual({ block: true, reason: "x".repeat(4000) });
    hookLog();
  });

  it("afterToolCall content as a string, and terminate, replace the result's", async () => {
    const { result, toolMessage } = await runWith(undefined, "after-string");
    hookLog();
    expect(result.stopReason).toBe("terminated");
    expect(result.text).toBe("replaced text");
    expect(toolMessage).toBeUndefined();
  });

  it.each([
    ["an unknown key", "unknown-key", "before", 'Tool call blocked: the beforeToolCall hook failed: hook "hook.mjs" printed unknown key "argz" (allowed: args, block, reason)'],
    ["exit 2 after the call (exit 2 blocks only before it)", "exit2-silent", "after", 'afterToolCall hook failed: afterToolCall hook "hook.mjs" failed with exit code 2'],
    ["a value of the wrong type", "wrong-type", "after", 'afterToolCall hook failed: hook "hook.mjs" printed "isError" that is not a boolean'],
  ])("%s is a hook failure, which the model sees as an error result", async (_what, mode, slot, message) => {
    const { result, toolMessage } = await runWith(slot === "before" ? mode : undefined, slot === "after" ? mode : undefined);
    hookLog();
    expect(result.stopReason).toBe("completed");
    expect(toolMessage).toMatchObject({ isError: true, content: [{ text: message }] });
  });
});

describe("hooks of a spec in `yiem run`", () => {
  it("run in the spec's folder (relative commands resolve there), whatever the current folder", async () => {
    const project = join(dir, "project");
    const elsewhere = join(dir, "elsewhere");
    mkdirSync(join(project, "tools"), { recursive: true });
    mkdirSync(elsewhere);
    writeFileSync(join(project, "hook.mjs"), HOOK, { mode: 0o755 });
    writeFileSync(
      join(project, "tools", "echo.mjs"),
      'export default { name: "echo", label: "Echo", description: "Echoes.", inputSchema: { type: "object" }, execute: async (_id, a) => ({ content: [{ type: "text", text: "echo: " + a.text }] }) };\n',
    );
    writeFileSync(
      join(project, "turns.jsonl"),
      [
        JSON.stringify({ content: "", toolCalls: [{ id: "call_1", name: "echo", arguments: '{"text":"hi"}' }], finishReason: "tool_calls" }),
        JSON.stringify({ content: "done", toolCalls: [], finishReason: "stop" }),
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(project, "agent.config.yaml"),
      ["model: replay:turns.jsonl", "toolDirs: [tools]", "builtinTools: []", "hooks:", "  beforeToolCall: { command: [./hook.mjs, log] }", "  afterToolCall: { command: [./hook.mjs, log] }", ""].join("\n"),
    );
    const r = await runCli(["run", "-c", join(project, "agent.config.yaml"), "--events", "ndjson", "go"], {
      cwd: elsewhere,
      env: { HOOK_TEST_TOKEN: SECRET, HOOK_TEST_PLAIN: "plain-value" },
      timeoutMs: 30_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("done\n");
    assertEventStream(r.events);
    const log = hookLog(project);
    expect(log.map((e) => (e.stdin as { hook: string }).hook)).toEqual(["beforeToolCall", "afterToolCall"]);
    for (const entry of log) expect(entry).toMatchObject({ cwd: project, token: null, plain: "plain-value" });
    expect(log[1].stdin).toMatchObject({ toolName: "echo", toolCallId: "call_1", turn: 1, args: { text: "hi" }, isError: false, result: { content: [{ type: "text", text: "echo: hi" }] } });
  }, 60_000);
});
