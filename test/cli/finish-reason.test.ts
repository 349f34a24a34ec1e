/**
 * A final answer cut by the model's token limit (`finish_reason: length`) is
 * not a completed run: stopReason `maxTokens`, exit 3, the partial text still printed; and
 * `--output json` carries `finishReason` (of the last response, null when there was none) on
 * every run.
 */
import { describe, expect, it } from "vitest";
import { reply } from "../support/chat-server.js";
import { useCompatProjects } from "../support/compat-cli.js";

const compat = useCompatProjects();

const CUT = "The three causes are: first, the cache was";

describe("an answer cut by the token limit (through the CLI)", () => {
  for (const stream of [true, false]) {
    const kind = stream ? "streamed" : "non-streamed";
    it(`${kind}, --output text: the partial text on stdout, stopReason maxTokens, exit 3`, async () => {
      const server = await compat.serve([(stream ? reply.stream : reply.json)({ content: CUT, finishReason: "length" })]);
      const r = await (stream ? compat.streaming : compat.plain).run(server);
      expect(r.code, r.stderr).toBe(3);
      expect(r.stdout).toBe(`${CUT}\n`);
      expect(r.end).toMatchObject({ stopReason: "maxTokens", turns: 1 });
      expect(r.end.error).toMatch(/cut by the model's token limit \(finish_reason length\).*model\.maxTokens/);
      expect(r.events.find((e) => e.type === "messageEnd")).toMatchObject({ finishReason: "length" });
      server.assertClean();
    });

    it(`${kind}, --output json: finishReason "length", stopReason maxTokens, the text and the error, exit 3`, async () => {
      const server = await compat.serve([(stream ? reply.stream : reply.json)({ content: CUT, finishReason: "length" })]);
      const r = await (stream ? compat.streaming : compat.plain).run(server, "go", ["--output", "json"]);
      expect(r.code, r.stderr).toBe(3);
      const json = JSON.parse(r.stdout);
      expect(json).toMatchObject({ text: CUT, stopReason: "maxTokens", finishReason: "length", turns: 1 });
      expect(json.error).toMatch(/token limit/);
      server.assertClean();
    });
  }

  it("a tool turn cut by the limit, then a whole answer: completed, exit 0, finishReason of the last response", async () => {
    const server = await compat.serve([
      reply.stream({ toolCalls: [{ name: "shout", arguments: '{"text":"a' }], finishReason: "length" }),
      reply.stream({ content: "done" }),
    ]);
    const r = await compat.streaming.run(server, "go", ["--output", "json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ text: "done", stopReason: "completed", finishReason: "stop", turns: 2 });
    server.assertClean();
  });
});

describe("--output json carries finishReason on every run", () => {
  it("a completed run: the last response's finish_reason", async () => {
    const server = await compat.serve([reply.stream({ toolCalls: [{ name: "count", arguments: '{"text":"abc"}' }] }), reply.stream({ content: "3" })]);
    const r = await compat.streaming.run(server, "go", ["--output", "json"]);
    expect(r.code, r.stderr).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json).toMatchObject({ text: "3", stopReason: "completed", finishReason: "stop" });
    expect(Object.keys(json)).toEqual(["runId", "text", "stopReason", "finishReason", "turns", "toolCalls", "usage", "durationMs", "error", "exitCode", "sessionId", "model", "costUsd", "structured"]);
    server.assertClean();
  });

  it("a response without finish_reason: \"unknown\"", async () => {
    const server = await compat.serve([reply.stream({ content: "ok", finishReason: null })]);
    const r = await compat.streaming.run(server, "go", ["--output", "json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ stopReason: "completed", finishReason: "unknown" });
  });

  it("a run that got no response at all: null, exit 1", async () => {
    const server = await compat.serve([reply.error(400, "model not found")]);
    const r = await compat.streaming.run(server, "go", ["--output", "json"]);
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout);
    expect(json).toMatchObject({ stopReason: "error", finishReason: null });
    expect(json.error).toContain("model not found");
    server.assertClean();
  });

  it("maxTurns after tool turns: the finish_reason of the last tool turn", async () => {
    const turns = Array.from({ length: 5 }, (_, i) => reply.stream({ toolCalls: [{ name: "count", arguments: `{"text":"${"x".repeat(i + 1)}"}` }] }));
    const server = await compat.serve(turns);
    const r = await compat.streaming.run(server, "go", ["--output", "json"]);
    expect(r.code, r.stderr).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ stopReason: "maxTurns", finishReason: "tool_calls", turns: 5 });
    server.assertClean();
  });
});
