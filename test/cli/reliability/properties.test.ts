/**
 * Battery: property-based tests (fast-check) of what the loop does with untrusted arguments, and
 * of secret redaction over streamed text.
 * - Random JSON values, random strings and random bytes as tool-call arguments never make
 *   runAgent throw, and every call gets exactly one result, in call order.
 * - Arguments valid for a schema always pass validation and reach the tool unchanged.
 * - Streamed text split anywhere never shows a secret, and equals the whole text redacted.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runAgent } from "../../../src/loop/run-agent.js";
import { createRedactor, createStreamRedactor } from "../../../src/redact.js";
import type { AgentEvent } from "../../../src/loop/types.js";
import { createScriptedProvider } from "../../../src/provider/scripted.js";
import { defineTool, toolResult } from "../../../src/tools/define.js";
import { echoTool, registryOf, toolMessages } from "../../support/loop.js";

const WEATHER_SCHEMA = {
  type: "object",
  properties: {
    city: { type: "string", minLength: 1, maxLength: 40 },
    days: { type: "integer", minimum: 1, maximum: 14 },
    units: { enum: ["metric", "imperial"] },
    tags: { type: "array", items: { type: "string" }, maxItems: 5 },
    when: { type: "string", format: "date" },
    exact: { type: "boolean" },
  },
  required: ["city"],
  additionalProperties: false,
};

const received: unknown[] = [];
const weather = defineTool({
  name: "weather",
  label: "weather",
  description: "weather",
  inputSchema: WEATHER_SCHEMA,
  execute: async (_id, args) => {
    received.push(args);
    return toolResult("ok");
  },
});
const anything = defineTool({ ...echoTool("anything"), inputSchema: { type: "object" }, execute: async () => toolResult("took it") });
const registry = registryOf(weather, echoTool(), anything);

/** Arbitrary raw argument strings: JSON of any value, any string, any bytes decoded as UTF-8 or Latin-1. */
const rawArguments = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.json(),
  fc.string({ unit: "binary" }),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString("utf8")),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString("latin1")),
  fc.constantFrom("", " ", "null", "[]", '"{\\"city\\":\\"x\\"}"', '{"__proto__":{"x":1}}', "{".repeat(1000), "[".repeat(5000) + "]".repeat(5000)),
);

const toolName = fc.constantFrom("weather", "echo", "anything", "missing", "", "__proto__", "constructor");

async function run(calls: Array<{ id: string; name: string; arguments: string }>, mode: "sequential" | "parallel") {
  const events: AgentEvent[] = [];
  const result = await runAgent({
    provider: createScriptedProvider([{ toolCalls: calls }, { content: "end" }]),
    registry,
    messages: [{ role: "user", content: "go" }],
    toolExecution: mode,
    limits: { loopDetection: 0 },
    onEvent: (e) => events.push(e),
  });
  return { result, events };
}

describe("random tool-call arguments", () => {
  it("never make runAgent throw; every call gets exactly one result, in order", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ name: toolName, arguments: rawArguments }), { minLength: 1, maxLength: 5 }),
        fc.constantFrom("sequential" as const, "parallel" as const),
        async (raw, mode) => {
          const calls = raw.map((c, i) => ({ id: `c${i}`, ...c }));
          const { result, events } = await run(calls, mode);
          expect(result.stopReason).toBe("completed");
          expect(toolMessages(result.messages).map((m) => m.toolCallId)).toEqual(calls.map((c) => c.id));
          const outcomes = events.filter((e) => e.type === "toolCallRejected" || e.type === "toolExecutionEnd");
          expect(outcomes).toHaveLength(calls.length);
          expect(events.filter((e) => e.type === "agentEnd")).toHaveLength(1);
          expect(events.at(-1)?.type).toBe("agentEnd");
          for (const event of events) JSON.stringify(event);
          expect(({} as Record<string, unknown>).x).toBeUndefined();
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe("pathological arguments", () => {
  it("nested 100 000 levels deep: rejected with a clear reason, and every event still serialises", async () => {
    const deep = `{"text":"x","a":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    const fine = `{"text":"x","a":${"[".repeat(60)}${"]".repeat(60)}}`;
    const { result, events } = await run([{ id: "d", name: "anything", arguments: deep }, { id: "f", name: "anything", arguments: fine }], "sequential");
    expect(result.stopReason).toBe("completed");
    expect(toolMessages(result.messages).map((m) => [m.toolCallId, m.isError])).toEqual([["d", true], ["f", false]]);
    const [rejected] = events.filter((e) => e.type === "toolCallRejected") as Array<{ reason: string }>;
    expect(rejected.reason).toContain("nested more than 64 levels deep");
    for (const event of events) expect(() => JSON.stringify(event)).not.toThrow();
  });
});

const validWeatherArgs = fc.record(
  {
    city: fc.string({ minLength: 1, maxLength: 40 }),
    days: fc.integer({ min: 1, max: 14 }),
    units: fc.constantFrom("metric", "imperial"),
    tags: fc.array(fc.string(), { maxLength: 5 }),
    when: fc.date({ min: new Date("1900-01-01T00:00:00Z"), max: new Date("2999-12-31T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
    exact: fc.boolean(),
  },
  { requiredKeys: ["city"] },
);

describe("arguments valid for the schema", () => {
  it("always pass validation and reach the tool unchanged", async () => {
    await fc.assert(
      fc.asyncProperty(validWeatherArgs, async (args) => {
        received.length = 0;
        const { result, events } = await run([{ id: "w", name: "weather", arguments: JSON.stringify(args) }], "sequential");
        expect(events.filter((e) => e.type === "toolCallRejected")).toEqual([]);
        expect(toolMessages(result.messages)[0].isError).toBe(false);
        expect(received).toEqual([args]);
      }),
      { numRuns: 150 },
    );
  });

  it("with one unknown key added are always rejected, and the tool never runs", async () => {
    await fc.assert(
      fc.asyncProperty(validWeatherArgs, fc.string({ minLength: 1 }).filter((k) => !(k in WEATHER_SCHEMA.properties)), async (args, key) => {
        received.length = 0;
        const withExtra = JSON.stringify({ ...args, [key]: 1 });
        const { events } = await run([{ id: "w", name: "weather", arguments: withExtra }], "sequential");
        expect(events.filter((e) => e.type === "toolCallRejected")).toHaveLength(1);
        expect(received).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });
});

describe("secret redaction over streamed text", () => {
  const secrets = ["sk-live-ABCDEF123", "tok-9876-xyz"];
  const whole = createRedactor(secrets);
  const piece = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom(...secrets), fc.constantFrom(...secrets.map((s) => s.slice(0, 5)), "sk-", "tok-"));

  it("never shows a secret however the text is split, and equals the whole text redacted", () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 8 }), (pieces, cuts) => {
        const text = pieces.join("");
        const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        const deltas = [0, ...points, text.length].slice(1).map((end, i, ends) => text.slice(i === 0 ? 0 : ends[i - 1], end));
        const redactor = createStreamRedactor(secrets);
        const shown = deltas.map((d) => redactor.push(d)).join("") + redactor.flush();
        for (const secret of secrets) expect(shown).not.toContain(secret);
        expect(shown).toBe(whole(text));
      }),
      { numRuns: 300 },
    );
  });
});
