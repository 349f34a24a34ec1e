import { readFileSync } from "node:fs";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import type { AgentEvent, AgentEventType } from "yiem";
import { createEventStamper } from "../../../src/loop/run-frame.js";

const schema = JSON.parse(readFileSync(new URL("../../../schema/events.schema.json", import.meta.url), "utf8"));

function compile() {
  const ajv = new Ajv({ allErrors: true, strict: true });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv.compile(schema);
}
const validate = compile();

const base = { runId: "run_1", ts: "2025-01-02T03:04:05.678Z" };
const usage = { promptTokens: 12, completionTokens: 5, totalTokens: 17 };

/** One example per event type; the `Record` makes a missing type a type error. */
const examples: { [K in AgentEventType]: Extract<AgentEvent, { type: K }> } = {
  agentStart: {
    type: "agentStart", ...base, seq: 1, schemaVersion: 1, yiemVersion: "0.1.0", model: "gpt-4o-mini",
    tools: ["getWeather", "listTools"], toolExecution: "sequential", configPath: "/p/agent.config.yaml",
  },
  turnStart: { type: "turnStart", ...base, seq: 2, turn: 1 },
  messageUpdate: { type: "messageUpdate", ...base, seq: 3, turn: 1, delta: "Let me check" },
  messageEnd: {
    type: "messageEnd", ...base, seq: 4, turn: 1,
    message: { role: "assistant", content: "Let me check", toolCalls: [{ id: "c1", name: "getWeather", arguments: "{\"city\":\"Paris\"}" }] },
    usage, finishReason: "tool_calls",
  },
  toolCallRejected: {
    type: "toolCallRejected", ...base, seq: 5, turn: 1, toolCallId: "c0", toolName: "nope", args: "{bad json", reason: "unknown tool",
  },
  toolExecutionStart: { type: "toolExecutionStart", ...base, seq: 6, turn: 1, toolCallId: "c1", toolName: "getWeather", args: { city: "Paris" } },
  toolExecutionUpdate: {
    type: "toolExecutionUpdate", ...base, seq: 7, turn: 1, toolCallId: "c1", toolName: "getWeather",
    partialResult: { content: [{ type: "text", text: "fetching…" }] },
  },
  toolExecutionEnd: {
    type: "toolExecutionEnd", ...base, seq: 8, turn: 1, toolCallId: "c1", toolName: "getWeather",
    result: { content: [{ type: "text", text: "18°C" }, { type: "image", data: "aGk=", mimeType: "image/png" }], details: { tempC: 18 } },
    isError: false, durationMs: 12.5,
  },
  retry: { type: "retry", ...base, seq: 9, attempt: 1, delayMs: 500, status: 429, message: "rate limited" },
  turnEnd: { type: "turnEnd", ...base, seq: 10, turn: 1, toolResults: 1, usage },
  warning: { type: "warning", ...base, seq: 11, message: "tool failed to load", path: "/p/tools/bad.ts" },
  mcpServerReady: {
    type: "mcpServerReady", ...base, seq: 12, server: "everything", transport: "stdio", protocolVersion: "2025-11-25",
    serverInfo: { name: "mcp-servers/everything", version: "2.0.0" }, tools: ["mcp__everything__echo"], durationMs: 480,
  },
  mcpServerError: {
    type: "mcpServerError", ...base, seq: 13, server: "github", phase: "handshake", required: false,
    message: "the server exited during start (exit code 1)", stderrTail: "GITHUB_TOKEN is not set",
  },
  mcpToolsChanged: { type: "mcpToolsChanged", ...base, seq: 14, server: "everything", added: ["mcp__everything__new"], removed: [] },
  debug: {
    type: "debug", ...base, seq: 15, kind: "http", method: "POST", url: "http://127.0.0.1:8080/v1/chat/completions", status: 200,
    headersMs: 12, durationMs: 80, retry: 0, requestBody: "{\"model\":\"m\"}", responseBody: "data: [DONE]\n\n",
  },
  agentEnd: {
    type: "agentEnd", ...base, seq: 12, stopReason: "completed", turns: 2, toolCalls: 1, usage, durationMs: 1234,
  },
  batchStart: {
    type: "batchStart", ...base, seq: 1, input: "/w/in.jsonl", output: "/w/out.jsonl", total: 10, skipped: 2, concurrency: 4,
    shard: { index: 1, count: 2, source: "YIEM_SHARD_INDEX=0 (0-based), YIEM_SHARD_COUNT=2" }, resumed: true,
  },
  batchProgress: {
    type: "batchProgress", ...base, seq: 2, total: 10, done: 3, ok: 2, error: 1, limit: 0, aborted: 0, running: 4, skipped: 2,
    usage, costUsd: 0.01, elapsedMs: 2000, perMinute: 90, etaMs: 3333,
  },
  batchEnd: {
    type: "batchEnd", ...base, seq: 3, total: 10, ok: 7, error: 1, limit: 0, aborted: 0, skipped: 2, notRun: 0, usage, durationMs: 9000, exitCode: 1,
  },
};

/** The other variants of a type told apart by `kind` (debug: http above, sdk here), one example each. */
const kindExamples: AgentEvent[] = [
  { type: "debug", ...base, seq: 16, kind: "sdk", level: "info", message: "[log_1a2b3c] post http://127.0.0.1:8080/v1/chat/completions succeeded with status 200 in 12ms" },
];

/** A variant's name: its type, and its kind where the type has several. */
const variantOf = (event: { type: string; kind?: string }) => (event.kind ? `${event.type}:${event.kind}` : event.type);

function errorsOf(value: unknown): string {
  validate(value);
  return JSON.stringify(validate.errors);
}

describe("schema/events.schema.json", () => {
  it("is a draft-07 schema that compiles in ajv strict mode", () => {
    expect(schema.$schema).toBe("http://json-schema.org/draft-07/schema#");
    expect(typeof validate).toBe("function");
  });

  it("has exactly one variant per AgentEvent type (per kind, for debug)", () => {
    const names = schema.oneOf.map((r: { $ref: string }) => {
      const properties = schema.definitions[r.$ref.split("/").pop()!].properties;
      return variantOf({ type: properties.type.const, kind: properties.kind?.const });
    });
    expect(names.sort()).toEqual([...Object.values(examples), ...kindExamples].map((e) => variantOf(e as { type: string; kind?: string })).sort());
  });

  for (const example of kindExamples) {
    it(`accepts a ${variantOf(example as { type: string; kind?: string })} example, and refuses it with an unknown level or another kind's fields`, () => {
      expect(validate(example), errorsOf(example)).toBe(true);
      expect(validate({ ...example, level: "trace" })).toBe(false);
      expect(validate({ ...example, method: "POST" })).toBe(false);
    });
  }

  for (const [type, example] of Object.entries(examples)) {
    it(`accepts a ${type} example`, () => {
      expect(validate(example), errorsOf(example)).toBe(true);
    });
  }

  it("accepts optional fields left out and nullable fields as null", () => {
    const { path: _path, ...warning } = examples.warning;
    expect(validate(warning), errorsOf(warning)).toBe(true);
    const failed = { ...examples.agentEnd, stopReason: "error", error: "model error after retries" };
    expect(validate(failed), errorsOf(failed)).toBe(true);
    expect(validate({ ...examples.agentStart, configPath: null })).toBe(true);
    expect(validate({ ...examples.retry, status: null })).toBe(true);
    expect(validate({ ...examples.batchStart, total: null, shard: null })).toBe(true);
    expect(validate({ ...examples.batchProgress, total: null, etaMs: null })).toBe(true);
    expect(validate({ ...examples.turnStart, itemId: "item-7" })).toBe(true);
    expect(validate({ ...examples.toolExecutionUpdate, partialResult: { content: [], details: [1, 2] } })).toBe(true);
  });

  it("accepts every event a stamper produces", () => {
    const stamp = createEventStamper("run_x");
    for (const { runId: _r, seq: _s, ts: _t, ...body } of Object.values(examples)) {
      const event = stamp(body as never);
      expect(validate(event), errorsOf(event)).toBe(true);
    }
  });

  const invalid: Array<[string, unknown]> = [
    ["an extra top-level field", { ...examples.turnStart, extra: true }],
    ["an extra field in usage", { ...examples.turnEnd, usage: { ...usage, cachedTokens: 1 } }],
    ["an extra field in a tool call", { ...examples.messageEnd, message: { ...examples.messageEnd.message, toolCalls: [{ id: "a", name: "b", arguments: "{}", type: "function" }] } }],
    ["a missing seq", (({ seq: _s, ...rest }) => rest)(examples.turnStart)],
    ["a missing runId", (({ runId: _r, ...rest }) => rest)(examples.turnStart)],
    ["a missing required body field", (({ reason: _r, ...rest }) => rest)(examples.toolCallRejected)],
    ["seq 0", { ...examples.turnStart, seq: 0 }],
    ["a fractional seq", { ...examples.turnStart, seq: 1.5 }],
    ["seq as a string", { ...examples.turnStart, seq: "1" }],
    ["a ts that is not a date-time", { ...examples.turnStart, ts: "yesterday" }],
    ["turn as a string", { ...examples.turnStart, turn: "1" }],
    ["an unknown type", { ...examples.turnStart, type: "turnBegin" }],
    ["an unknown stopReason", { ...examples.agentEnd, stopReason: "finished" }],
    ["schemaVersion 2", { ...examples.agentStart, schemaVersion: 2 }],
    ["negative token counts", { ...examples.turnEnd, usage: { ...usage, promptTokens: -1 } }],
    ["fractional token counts", { ...examples.turnEnd, usage: { ...usage, totalTokens: 1.5 } }],
    ["an image part without mimeType", { ...examples.toolExecutionEnd, result: { content: [{ type: "image", data: "aGk=" }] } }],
    ["a text part with an extra field", { ...examples.toolExecutionEnd, result: { content: [{ type: "text", text: "x", bold: true }] } }],
    ["isError as a string", { ...examples.toolExecutionEnd, isError: "false" }],
    ["a message from a non-assistant role", { ...examples.messageEnd, message: { ...examples.messageEnd.message, role: "user" } }],
    ["status as a string", { ...examples.retry, status: "429" }],
    ["an empty itemId", { ...examples.turnStart, itemId: "" }],
    ["a batchEnd without exitCode", (({ exitCode: _e, ...rest }) => rest)(examples.batchEnd)],
    ["a 0-based shard index", { ...examples.batchStart, shard: { index: 0, count: 2 } }],
  ];
  for (const [what, value] of invalid) {
    it(`rejects ${what}`, () => {
      expect(validate(value)).toBe(false);
    });
  }
});

describe("docs/events.md", () => {
  const doc = readFileSync(new URL("../../../docs/events.md", import.meta.url), "utf8");
  const lines = [...doc.matchAll(/```json\n(.*)\n```/g)].map((m) => m[1]);

  it("shows one example line per event type (per kind, for debug)", () => {
    expect(lines.map((line) => variantOf(JSON.parse(line))).sort()).toEqual([...Object.values(examples), ...kindExamples].map((e) => variantOf(e as { type: string; kind?: string })).sort());
  });

  it("has only example lines that validate against the schema", () => {
    for (const line of lines) expect(validate(JSON.parse(line)), `${line}\n${errorsOf(JSON.parse(line))}`).toBe(true);
  });
});
