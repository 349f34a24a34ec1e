import { describe, expect, it } from "vitest";
import { defineTool, toolResult } from "../../src/tools/define.js";
import { echoTool, registryOf, runScripted, textOf, toolMessages } from "../support/loop.js";

const weatherTool = defineTool({
  name: "weather",
  label: "Weather",
  description: "weather for a city",
  inputSchema: {
    type: "object",
    properties: {
      city: { type: "string", minLength: 1 },
      units: { type: "string", enum: ["celsius", "fahrenheit"], default: "celsius" },
      days: { type: "integer", minimum: 1 },
    },
    required: ["city"],
    additionalProperties: false,
  },
  validateRequiredArgs(args: { city: string }) {
    return args.city === "Atlantis" ? "city must be a real place" : undefined;
  },
  async execute(_id, args: { city: string; units: string; days?: number }) {
    return toolResult(`${args.city}:${args.units}:${args.days ?? "-"}:${typeof args.days}`);
  },
});

describe("the loop: basics", () => {
  it("answers without tools: completed, agentStart first, agentEnd last exactly once", async () => {
    const { result, types, events } = await runScripted([{ content: "hello" }], []);
    expect(result.stopReason).toBe("completed");
    expect(result.text).toBe("hello");
    expect(types[0]).toBe("agentStart");
    expect(types.at(-1)).toBe("agentEnd");
    expect(types.filter((t) => t === "agentEnd")).toHaveLength(1);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(new Set(events.map((e) => e.runId)).size).toBe(1);
  });

  it("runs a tool round trip and feeds the result back", async () => {
    const { result, provider, types } = await runScripted(
      [{ toolCalls: [{ id: "c1", name: "echo", arguments: '{"text":"hi"}' }] }, { content: "done" }],
      [echoTool()],
    );
    expect(result.stopReason).toBe("completed");
    expect(result.toolCalls).toBe(1);
    expect(result.turns).toBe(2);
    const sent = toolMessages(provider.requests[1].messages);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ toolCallId: "c1", isError: false });
    expect(textOf(sent[0].content)).toBe("echo:hi");
    expect(types).toEqual([
      "agentStart", "turnStart", "messageEnd", "toolExecutionStart", "toolExecutionEnd", "turnEnd",
      "turnStart", "messageUpdate", "messageEnd", "turnEnd", "agentEnd",
    ]);
  });

  it("feeds validation errors back; the model retries successfully on the next turn", async () => {
    const { result, provider, ofType } = await runScripted(
      [
        { toolCalls: [{ id: "bad", name: "weather", arguments: '{"city": 5, "units": "kelvin", "extra": 1}' }] },
        { toolCalls: [{ id: "good", name: "weather", arguments: '{"city": "Oslo", "days": "3"}' }] },
        { content: "ok" },
      ],
      [weatherTool],
    );
    expect(result.stopReason).toBe("completed");
    const firstResult = toolMessages(provider.requests[1].messages)[0];
    expect(firstResult.isError).toBe(true);
    const text = textOf(firstResult.content);
    expect(text).toContain('tool "weather"');
    expect(text).toContain("units");
    expect(text).toContain("extra");
    expect(text).toContain('"kelvin"');
    expect(ofType("toolCallRejected")).toHaveLength(1);
    expect(ofType("toolExecutionStart").map((e) => e.toolCallId)).toEqual(["good"]);
    // defaults applied and scalars coerced
    expect(textOf(toolMessages(provider.requests[2].messages)[1].content)).toBe("Oslo:celsius:3:number");
  });

  it("custom validation (validateRequiredArgs) rejects before execute", async () => {
    const { provider, ofType } = await runScripted(
      [{ toolCalls: [{ id: "a", name: "weather", arguments: '{"city":"Atlantis"}' }] }, { content: "ok" }],
      [weatherTool],
    );
    expect(ofType("toolExecutionStart")).toHaveLength(0);
    expect(textOf(toolMessages(provider.requests[1].messages)[0].content)).toContain("city must be a real place");
  });

  it("rejects an unknown tool, naming the available ones", async () => {
    const { ofType, provider } = await runScripted(
      [{ toolCalls: [{ id: "x", name: "nope", arguments: "{}" }] }, { content: "ok" }],
      [echoTool()],
    );
    const rejected = ofType("toolCallRejected");
    expect(rejected).toHaveLength(1);
    expect(rejected[0].reason).toContain('Unknown tool "nope"');
    expect(rejected[0].reason).toContain("echo");
    expect(ofType("toolExecutionStart")).toHaveLength(0);
    expect(toolMessages(provider.requests[1].messages)[0].isError).toBe(true);
  });

  it("rejects malformed JSON arguments with the received text", async () => {
    const { ofType } = await runScripted(
      [{ toolCalls: [{ id: "x", name: "echo", arguments: '{"text": "unterminated' }] }, { content: "ok" }],
      [echoTool()],
    );
    const [rejected] = ofType("toolCallRejected");
    expect(rejected.reason).toContain("not valid JSON");
    expect(rejected.reason).toContain("unterminated");
  });

  it('treats "" as {} and unwraps a JSON string holding an object', async () => {
    const { ofType } = await runScripted(
      [
        { toolCalls: [{ id: "e", name: "echo", arguments: "" }, { id: "w", name: "echo", arguments: JSON.stringify('{"text":"wrapped"}') }] },
        { content: "ok" },
      ],
      [echoTool()],
    );
    const ends = ofType("toolExecutionEnd");
    expect(ends.map((e) => textOf(e.result.content))).toEqual(["echo:", "echo:wrapped"]);
    expect(ends.every((e) => !e.isError)).toBe(true);
  });

  it("rejects arguments that are JSON but not an object", async () => {
    const { ofType } = await runScripted(
      [{ toolCalls: [{ id: "a", name: "echo", arguments: "[1,2]" }, { id: "b", name: "echo", arguments: "null" }] }, { content: "ok" }],
      [echoTool()],
    );
    expect(ofType("toolCallRejected").map((e) => e.reason)).toEqual([
      expect.stringContaining("must be a JSON object, got an array"),
      expect.stringContaining("got null"),
    ]);
  });

  it("turns a throwing tool and a malformed result into error results", async () => {
    const thrower = defineTool({ ...echoTool("thrower"), async execute() { throw new Error("boom"); } });
    const shapeless = defineTool({ ...echoTool("shapeless"), execute: async () => ({ content: "nope" }) as never });
    const { provider, result } = await runScripted(
      [{ toolCalls: [{ id: "t", name: "thrower", arguments: "{}" }, { id: "s", name: "shapeless", arguments: "{}" }] }, { content: "ok" }],
      [thrower, shapeless],
    );
    expect(result.stopReason).toBe("completed");
    const [a, b] = toolMessages(provider.requests[1].messages);
    expect(a.isError && textOf(a.content)).toContain("boom");
    expect(b.isError && textOf(b.content)).toContain("invalid result");
  });

  it("reports partial results as toolExecutionUpdate events in order", async () => {
    const progress = defineTool({
      ...echoTool("progress"),
      async execute(_id, _args, _signal, onPartial) {
        onPartial("one");
        onPartial({ content: [{ type: "text", text: "two" }], details: { step: 2 } });
        return toolResult("three");
      },
    });
    const { ofType } = await runScripted([{ toolCalls: [{ name: "progress", arguments: "{}" }] }, { content: "ok" }], [progress]);
    const updates = ofType("toolExecutionUpdate");
    expect(updates.map((u) => textOf(u.partialResult.content))).toEqual(["one", "two"]);
    expect(updates[1].partialResult.details).toEqual({ step: 2 });
  });

  it("offers a tool added to the registry during the run from the next turn", async () => {
    const registry = registryOf(echoTool());
    const adder = defineTool({
      ...echoTool("adder"),
      async execute() {
        registry.register(echoTool("late"));
        return toolResult("added");
      },
    });
    registry.register(adder);
    const { provider, result } = await runScripted(
      [{ toolCalls: [{ name: "adder", arguments: "{}" }] }, { toolCalls: [{ name: "late", arguments: '{"text":"x"}' }] }, { content: "ok" }],
      [],
      { registry },
    );
    expect(provider.requests[0].tools.map((t) => t.name)).not.toContain("late");
    expect(provider.requests[1].tools.map((t) => t.name)).toContain("late");
    expect(textOf(toolMessages(provider.requests[2].messages)[1].content)).toBe("echo:x");
    expect(result.stopReason).toBe("completed");
  });

  it("accumulates usage from the model and from tools", async () => {
    const spender = defineTool({ ...echoTool("spender"), execute: async () => toolResult("x", { usage: { promptTokens: 1, completionTokens: 2 } }) });
    const { result, ofType } = await runScripted(
      [
        { toolCalls: [{ name: "spender", arguments: "{}" }], usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 } },
        { content: "ok", usage: { promptTokens: 20, completionTokens: 1, totalTokens: 21 } },
      ],
      [spender],
    );
    expect(result.usage).toEqual({ promptTokens: 31, completionTokens: 8, totalTokens: 39 });
    expect(ofType("agentEnd")[0].usage).toEqual(result.usage);
    expect(ofType("turnEnd")[0].usage.totalTokens).toBe(18);
  });
});
