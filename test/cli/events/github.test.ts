/**
 * `--events github`, the renderer alone: which events become which workflow
 * commands, GitHub's escaping, and untrusted text that cannot start a command of its own.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { AgentEvent, AgentEventBody } from "yiem";
import { DATA_CHARS, escapeCommandData, escapeCommandProperty, workflowCommand } from "../../../src/cli/events/github.js";
import { createEventSink } from "../../../src/cli/events/sink.js";
import { createEventStamper } from "../../../src/loop/run-frame.js";
import { parseWorkflowLines, workflowCommands } from "../../support/github.js";

const usage = { promptTokens: 3, completionTokens: 2, totalTokens: 5 };
const start: AgentEventBody = { type: "agentStart", schemaVersion: 1, yiemVersion: "0.1.0", model: "m", tools: ["t"], toolExecution: "sequential", configPath: "/work/repo/agents/triage.yaml" };

/** What the github sink writes for `bodies` (stamped as one run), with `env`. */
async function render(bodies: Array<AgentEventBody | AgentEvent>, env: NodeJS.ProcessEnv = {}, notes: string[] = []): Promise<string> {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  const sink = createEventSink({ mode: "github", stream, env });
  const stamp = createEventStamper("run_gh");
  for (const body of bodies) sink.emit("runId" in body ? body : stamp(body));
  for (const note of notes) sink.log(note);
  await sink.close();
  return text;
}

describe("escaping", () => {
  it("escapes data as GitHub does: % first, then CR and LF", () => {
    expect(escapeCommandData("100% done\r\nnext %0A")).toBe("100%25 done%0D%0Anext %250A");
  });

  it("escapes a property also for : and ,", () => {
    expect(escapeCommandProperty("a:b,c%\n")).toBe("a%3Ab%2Cc%25%0A");
  });

  it("a command line holds no raw newline whatever the text, and reads back to the text", () => {
    const text = "line one\n::add-mask::secret\r\n::stop-commands::x\n##[set-output name=a;]b\n100%";
    const line = workflowCommand("error", text, { title: "t: a, b", file: "x,y:z.yaml" });
    expect(line.endsWith("\n")).toBe(true);
    expect(line.slice(0, -1)).not.toMatch(/[\r\n]/);
    const [command] = workflowCommands(line);
    // CR is a terminal control character: it is stripped before escaping, like every other one.
    expect(command).toEqual({ name: "error", properties: { title: "t: a, b", file: "x,y:z.yaml" }, data: text.replace(/\r/g, "") });
  });

  it("strips terminal control sequences and cuts long data", () => {
    const [colour] = workflowCommands(workflowCommand("warning", "\x1b[31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07"));
    expect(colour.data).toBe("red link");
    const [long] = workflowCommands(workflowCommand("error", "x".repeat(DATA_CHARS + 10)));
    expect(long.data).toBe(`${"x".repeat(DATA_CHARS)}… [10 more characters]`);
  });
});

describe("the github sink", () => {
  it("a completed run is debug lines only: no annotation, nothing for turns, text or tools", async () => {
    const text = await render([
      start,
      { type: "turnStart", turn: 1 },
      { type: "messageUpdate", turn: 1, delta: "::error::not from yiem" },
      { type: "messageEnd", turn: 1, message: { role: "assistant", content: "::error::not from yiem", toolCalls: [] }, usage, finishReason: "stop" },
      { type: "turnEnd", turn: 1, toolResults: 0, usage },
      { type: "agentEnd", stopReason: "completed", turns: 1, toolCalls: 0, usage, durationMs: 12 },
    ]);
    const commands = workflowCommands(text);
    expect(commands.map((c) => c.name)).toEqual(["debug", "debug"]);
    expect(commands[0].data).toBe("yiem started (run run_gh): model m, tools t");
    expect(commands[1].data).toBe("yiem completed (run run_gh): 1 turn, 0 tool calls, 5 tokens, 12 ms");
  });

  it("a failed run is one ::error:: titled with the stop reason, its spec as file relative to GITHUB_WORKSPACE", async () => {
    const text = await render([
      start,
      { type: "agentEnd", stopReason: "error", turns: 1, toolCalls: 0, usage, durationMs: 3, error: "model request failed: 500 boom\n::add-mask::x" },
    ], { GITHUB_WORKSPACE: "/work/repo" });
    const errors = workflowCommands(text).filter((c) => c.name !== "debug");
    expect(errors).toEqual([{
      name: "error",
      properties: { title: "yiem failed: error", file: "agents/triage.yaml" },
      data: "model request failed: 500 boom\n::add-mask::x\n(run run_gh: 1 turn, 0 tool calls, 5 tokens, 3 ms)",
    }]);
  });

  it("a limit without an error message still says why; a spec outside the workspace keeps its path", async () => {
    const text = await render([start, { type: "agentEnd", stopReason: "maxTurns", turns: 3, toolCalls: 2, usage, durationMs: 9 }], { GITHUB_WORKSPACE: "/elsewhere" });
    const [error] = workflowCommands(text).filter((c) => c.name === "error");
    expect(error.properties).toEqual({ title: "yiem failed: maxTurns", file: "/work/repo/agents/triage.yaml" });
    expect(error.data.split("\n")[0]).toBe("the run stopped: maxTurns");
  });

  it("a run that never started (a lone agentEnd) is an ::error:: without a file", async () => {
    const text = await render([{ type: "agentEnd", stopReason: "error", turns: 0, toolCalls: 0, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, durationMs: 0, error: "spec: model.name is required" }]);
    const commands = workflowCommands(text);
    expect(commands).toHaveLength(1);
    expect(commands[0]).toMatchObject({ name: "error", properties: { title: "yiem failed: error" } });
    expect(commands[0].data.split("\n")[0]).toBe("spec: model.name is required");
  });

  it("warnings and failed MCP servers are ::warning::, with the warning's path as file", async () => {
    const text = await render([
      start,
      { type: "warning", message: "tool failed to load: SyntaxError", path: "/work/repo/tools/broken.ts" },
      { type: "warning", code: "stdinIgnored", message: "stdin sent nothing in 5 s" },
      { type: "mcpServerError", server: "gh", phase: "handshake", required: false, message: "exited (code 1)", stderrTail: "TOKEN is not set" },
    ], { GITHUB_WORKSPACE: "/work/repo" });
    const warnings = workflowCommands(text).filter((c) => c.name === "warning");
    expect(warnings).toEqual([
      { name: "warning", properties: { title: "yiem: warning", file: "tools/broken.ts" }, data: "tool failed to load: SyntaxError" },
      { name: "warning", properties: { title: "yiem: warning (stdinIgnored)" }, data: "stdin sent nothing in 5 s" },
      { name: "warning", properties: { title: 'yiem: MCP server "gh" failed (handshake)' }, data: "exited (code 1)\nserver stderr:\nTOKEN is not set" },
    ]);
  });

  it("retries, rejected and failed tool calls are debug lines; notes are notices", async () => {
    const text = await render([
      { type: "retry", attempt: 1, delayMs: 500, status: 429, message: "Rate limit reached" },
      { type: "toolCallRejected", turn: 1, toolCallId: "c0", toolName: "deleteAll", args: {}, reason: "not allowed" },
      { type: "toolExecutionEnd", turn: 1, toolCallId: "c1", toolName: "t", result: { content: [] }, isError: true, durationMs: 4 },
      { type: "toolExecutionEnd", turn: 1, toolCallId: "c2", toolName: "t", result: { content: [] }, isError: false, durationMs: 4 },
    ], {}, ["waiting for the session lock"]);
    expect(workflowCommands(text)).toEqual([
      { name: "debug", properties: {}, data: "yiem: model request retry 1 in 500 ms (429): Rate limit reached" },
      { name: "debug", properties: {}, data: "yiem: tool call deleteAll rejected: not allowed" },
      { name: "debug", properties: {}, data: "yiem: tool t failed after 4 ms" },
      { name: "notice", properties: {}, data: "waiting for the session lock" },
    ]);
  });

  it("a batch item's events name the item in the title", async () => {
    const stamp = createEventStamper("run_item");
    const end = { ...stamp({ type: "agentEnd", stopReason: "timeout", turns: 1, toolCalls: 0, usage, durationMs: 5, error: "run timed out" }), itemId: "issue-7" } as unknown as AgentEvent;
    const [error] = workflowCommands(await render([end]));
    expect(error.properties.title).toBe('yiem batch item "issue-7" failed: timeout');
  });

  it("every line it writes is a workflow command, never plain text", async () => {
    const text = await render([start, { type: "warning", message: "a\nb" }, { type: "agentEnd", stopReason: "error", turns: 0, toolCalls: 0, usage, durationMs: 1, error: "x\n\n  ::set-env name=A::B" }]);
    for (const line of parseWorkflowLines(text)) expect(line).toHaveProperty("command");
  });
});
