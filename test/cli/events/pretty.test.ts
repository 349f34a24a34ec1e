import { describe, expect, it } from "vitest";
import type { AgentEventBody } from "yiem";
import { createEventSink, type EventSinkOptions } from "../../../src/cli/events/sink.js";
import { createEventStamper } from "../../../src/loop/run-frame.js";
import { captureStream } from "../../support/streams.js";

const ESC = "\x1b";
const SGR = /\x1b\[[0-9;]*m/;
const usage = { promptTokens: 1200, completionTokens: 34, totalTokens: 1234 };

const hostile = `${ESC}]52;c;cm0gLXJmIH4=\x07${ESC}[2J${ESC}]8;;https://evil.example/${ESC}\\click${ESC}]8;;${ESC}\\\x9b31m\x07`;

/** A whole run: a retry, streamed text, a rejected call, a tool with progress, a failing tool. */
function runBodies(text = "Checking the weather."): AgentEventBody[] {
  return [
    { type: "agentStart", schemaVersion: 1, yiemVersion: "0.1.0", model: "gpt-4o-mini", tools: ["getWeather", "listTools"], toolExecution: "parallel", configPath: null },
    { type: "turnStart", turn: 1 },
    { type: "retry", attempt: 1, delayMs: 500, status: 429, message: "rate limited" },
    { type: "messageUpdate", turn: 1, delta: text.slice(0, 8) },
    { type: "messageUpdate", turn: 1, delta: text.slice(8) },
    {
      type: "messageEnd", turn: 1, usage, finishReason: "tool_calls",
      message: { role: "assistant", content: text, toolCalls: [{ id: "c1", name: "getWeather", arguments: "{\"city\":\"Paris\"}" }] },
    },
    { type: "toolCallRejected", turn: 1, toolCallId: "c0", toolName: "rmRf", args: {}, reason: "blocked by policy: rmRf is denied" },
    { type: "toolExecutionStart", turn: 1, toolCallId: "c1", toolName: "getWeather", args: { city: "Paris" } },
    { type: "toolExecutionUpdate", turn: 1, toolCallId: "c1", toolName: "getWeather", partialResult: { content: [{ type: "text", text: "step 1\nconnecting to api" }] } },
    { type: "toolExecutionEnd", turn: 1, toolCallId: "c1", toolName: "getWeather", result: { content: [{ type: "text", text: "18°C, light rain" }] }, isError: false, durationMs: 1530 },
    { type: "toolExecutionStart", turn: 1, toolCallId: "c2", toolName: "listTools", args: {} },
    { type: "toolExecutionEnd", turn: 1, toolCallId: "c2", toolName: "listTools", result: { content: [{ type: "text", text: "boom: disk full" }] }, isError: true, durationMs: 12 },
    { type: "turnEnd", turn: 1, toolResults: 2, usage },
    { type: "warning", message: "tool failed to load", path: "/p/tools/bad.ts" },
    { type: "turnStart", turn: 2 },
    { type: "messageEnd", turn: 2, usage, finishReason: "stop", message: { role: "assistant", content: "It is 18°C in Paris.", toolCalls: [] } },
    { type: "turnEnd", turn: 2, toolResults: 0, usage },
    { type: "agentEnd", stopReason: "completed", turns: 2, toolCalls: 3, usage, durationMs: 4200 },
  ];
}

async function renderRun(options: Omit<EventSinkOptions, "mode" | "stream">, bodies = runBodies(), isTTY = false) {
  const out = captureStream(isTTY ? { isTTY: true, columns: 100 } : {});
  const sink = createEventSink({ mode: "pretty", stream: out.stream, ...options });
  const stamp = createEventStamper("run_p");
  for (const body of bodies) sink.emit(stamp(body));
  await sink.close();
  return out.text();
}

describe("pretty sink", () => {
  it("names the stored session in the first line, and nothing when there is none", async () => {
    const [start, ...rest] = runBodies();
    const withSession = await renderRun({ color: false }, [{ ...start, sessionId: "pr-123" } as AgentEventBody, ...rest]);
    expect(withSession.split("\n")[0]).toContain("2 tools (parallel) · session pr-123");
    expect((await renderRun({ color: false })).split("\n")[0]).not.toContain("session");
  });

  it("shows the key facts of a run as plain lines without colour or a TTY", async () => {
    const text = await renderRun({ color: false });
    expect(text).not.toContain(ESC);
    for (const fact of [
      "gpt-4o-mini", "2 tools (parallel)",
      "turn 1", "turn 2",
      "Checking the weather.", "It is 18°C in Paris.",
      "retry 1 in 500ms (HTTP 429): rate limited",
      "rmRf rejected: blocked by policy: rmRf is denied",
      "→ getWeather {\"city\":\"Paris\"}",
      "… connecting to api",
      "✓ getWeather 1.5s 18°C, light rain",
      "✗ listTools 12ms boom: disk full",
      "⚠ tool failed to load (/p/tools/bad.ts)",
      "✓ completed", "2 turns", "3 tool calls", "1,234 tokens (1,200 prompt + 34 completion)", "4.2s",
    ]) {
      expect(text).toContain(fact);
    }
    expect(text.endsWith("\n")).toBe(true);
  });

  it("shows a priced run's cost in the summary, and no cost when unpriced", async () => {
    const bodies = runBodies();
    const end = bodies.pop()!;
    const priced = await renderRun({ color: false }, [...bodies, { ...end, costUsd: 0.0085 } as AgentEventBody]);
    expect(priced).toContain("4.2s · $0.0085");
    expect(await renderRun({ color: false })).not.toContain("$");
  });

  it("shows MCP servers: ready, failed with their stderr (terminal escapes removed), tools changed", async () => {
    const bodies: AgentEventBody[] = [
      { type: "mcpServerReady", server: "everything", transport: "stdio", protocolVersion: "2025-11-25", serverInfo: { name: "mcp-servers/everything", version: "2.0.0" }, tools: ["mcp__everything__echo", "mcp__everything__get-sum"], durationMs: 480 },
      { type: "mcpServerError", server: "github", phase: "handshake", required: false, message: "the server exited during start (exit code 1)", stderrTail: `token missing${hostile}` },
      { type: "mcpToolsChanged", server: "everything", added: ["mcp__everything__new"], removed: [] },
      { type: "agentEnd", stopReason: "completed", turns: 1, toolCalls: 0, usage, durationMs: 900 },
    ];
    const text = await renderRun({ color: false }, bodies);
    expect(text).toContain("● mcp everything mcp-servers/everything 2.0.0 · 2 tools · 480ms");
    expect(text).toContain("⚠ mcp github (handshake) the server exited during start (exit code 1)");
    expect(text).toContain("token missing");
    expect(text).not.toContain(ESC);
    expect(text).toContain("↻ mcp everything tools changed: +1 −0");
  });

  it("shows a failed run's stop reason and error", async () => {
    const bodies: AgentEventBody[] = [
      { type: "turnStart", turn: 1 },
      { type: "agentEnd", stopReason: "error", turns: 1, toolCalls: 0, usage, durationMs: 90, error: "model error after 2 retries: HTTP 500" },
    ];
    const text = await renderRun({ color: false }, bodies);
    expect(text).toContain("✗ error");
    expect(text).toContain("1 turn ·");
    expect(text).toContain("model error after 2 retries: HTTP 500");
  });

  it("neutralises escape sequences in model text, tool output, args, reasons and warnings", async () => {
    const bodies: AgentEventBody[] = [
      { type: "turnStart", turn: 1 },
      { type: "messageUpdate", turn: 1, delta: `hello ${hostile}world` },
      { type: "messageEnd", turn: 1, usage, finishReason: "stop", message: { role: "assistant", content: "", toolCalls: [] } },
      { type: "toolCallRejected", turn: 1, toolCallId: "c0", toolName: `x${hostile}`, args: hostile, reason: hostile },
      { type: "toolExecutionStart", turn: 1, toolCallId: "c1", toolName: "t", args: { a: hostile } },
      { type: "toolExecutionUpdate", turn: 1, toolCallId: "c1", toolName: "t", partialResult: { content: [{ type: "text", text: hostile }] } },
      { type: "toolExecutionEnd", turn: 1, toolCallId: "c1", toolName: "t", result: { content: [{ type: "text", text: `ok${hostile}` }] }, isError: false, durationMs: 1 },
      { type: "warning", message: hostile, path: hostile },
      { type: "retry", attempt: 1, delayMs: 1, status: null, message: hostile },
      { type: "agentEnd", stopReason: "completed", turns: 1, toolCalls: 1, usage, durationMs: 5, error: hostile },
    ];
    const text = await renderRun({ color: false }, bodies);
    expect(text).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    expect(text).toContain("hello click");
    expect(text).toContain("✓ t 1ms okclick");
  });

  it("keeps its own colours but no foreign escapes when colour is on", async () => {
    const text = await renderRun({ color: true }, [
      { type: "messageUpdate", turn: 1, delta: hostile },
      { type: "agentEnd", stopReason: "completed", turns: 1, toolCalls: 0, usage, durationMs: 5 },
    ]);
    expect(text).toMatch(SGR);
    expect(text.replace(/\x1b\[[0-9;]*m/g, "")).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  });

  it("colours a TTY by default and honours NO_COLOR and TERM=dumb", async () => {
    expect(await renderRun({ env: { TERM: "xterm-256color" } }, runBodies(), true)).toMatch(SGR);
    expect(await renderRun({ env: { TERM: "xterm-256color", NO_COLOR: "1" } }, runBodies(), true)).not.toMatch(SGR);
    expect(await renderRun({ env: { TERM: "dumb" } }, runBodies(), true)).not.toMatch(SGR);
    expect(await renderRun({ env: { TERM: "xterm-256color" } }, runBodies(), false)).not.toMatch(SGR);
    expect(await renderRun({ env: { TERM: "xterm-256color", NO_COLOR: "1" }, color: true }, runBodies(), false)).toMatch(SGR);
  });

  it("on a TTY draws a status line for a running tool and clears it, without per-update lines", async () => {
    const text = await renderRun({ color: false }, runBodies(), true);
    expect(text).toContain("\r\x1b[2K");
    expect(text).toMatch(/⠋ getWeather \d+ms/);
    expect(text).not.toContain("… connecting to api\n");
    expect(text).toContain("✓ getWeather 1.5s");
    // The status line is gone at the end: the output ends with the summary line.
    expect(text.trimEnd().split("\n").pop()).toContain("✓ completed");
  });

  it("prints log() notes in pretty mode, sanitised", async () => {
    const out = captureStream();
    const sink = createEventSink({ mode: "pretty", stream: out.stream, color: false });
    sink.log(`loaded 3 tools ${hostile}`);
    await sink.close();
    expect(out.text()).toBe("loaded 3 tools click\n");
  });

  it("shows non-streamed assistant text once, and streamed text only once", async () => {
    const text = await renderRun({ color: false });
    expect(text.split("Checking the weather.").length - 1).toBe(1);
    expect(text.split("It is 18°C in Paris.").length - 1).toBe(1);
  });
});
