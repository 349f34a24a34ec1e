import { describe, expect, it } from "vitest";
import { defineTool, textContent, toolResult } from "../../src/tools/define.js";
import { echoTool, gateTool, runScripted, textOf, toolMessages } from "../support/loop.js";
import { createScriptedProvider } from "../../src/provider/scripted.js";
import { withTextToolCalls } from "../../src/provider/text-tool-calls.js";

const calls = (name: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${name}${i + 1}`, name, arguments: `{"n":${i}}` }));

describe("execution modes", () => {
  it("sequential: one call at a time, in order", async () => {
    const log: string[] = [];
    await runScripted([{ toolCalls: calls("gate", 3) }, { content: "ok" }], [gateTool("gate", log, 5)], { toolExecution: "sequential" });
    expect(log).toEqual(["start:gate1", "end:gate1", "start:gate2", "end:gate2", "start:gate3", "end:gate3"]);
  });

  it("parallel: calls overlap, and results keep call order", async () => {
    const log: string[] = [];
    const slowFirst = defineTool({
      ...gateTool("gate", log),
      async execute(id) {
        log.push(`start:${id}`);
        await new Promise((r) => setTimeout(r, id === "gate1" ? 60 : 5));
        log.push(`end:${id}`);
        return toolResult(`done ${id}`);
      },
    });
    const { provider } = await runScripted([{ toolCalls: calls("gate", 3) }, { content: "ok" }], [slowFirst], { toolExecution: "parallel" });
    expect(log.slice(0, 3)).toEqual(["start:gate1", "start:gate2", "start:gate3"]);
    expect(log.indexOf("end:gate1")).toBe(5);
    expect(toolMessages(provider.requests[1].messages).map((m) => m.toolCallId)).toEqual(["gate1", "gate2", "gate3"]);
  });

  it("parallel: a parallelToolExecute:false tool runs alone, between earlier and later calls", async () => {
    const log: string[] = [];
    const { provider } = await runScripted(
      [{ toolCalls: [...calls("p", 2), { id: "solo", name: "solo", arguments: "{}" }, ...calls("q", 2)] }, { content: "ok" }],
      [gateTool("p", log, 10), gateTool("q", log, 10), gateTool("solo", log, 10, { parallelToolExecute: false })],
      { toolExecution: "parallel" },
    );
    const at = (entry: string) => log.indexOf(entry);
    expect(at("start:solo")).toBeGreaterThan(Math.max(at("end:p1"), at("end:p2")));
    expect(at("end:solo")).toBeLessThan(Math.min(at("start:q1"), at("start:q2")));
    expect(at("start:q2")).toBeLessThan(at("end:q1")); // q1 and q2 overlap
    expect(toolMessages(provider.requests[1].messages).map((m) => m.toolCallId)).toEqual(["p1", "p2", "solo", "q1", "q2"]);
  });

  it("parallel: at most maxConcurrency calls run at once", async () => {
    let running = 0;
    let peak = 0;
    const counted = defineTool({
      ...gateTool("c", []),
      async execute() {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 10));
        running -= 1;
        return toolResult("x");
      },
    });
    await runScripted([{ toolCalls: calls("c", 7) }, { content: "ok" }], [counted], {
      toolExecution: "parallel",
      limits: { maxConcurrency: 3 },
    });
    expect(peak).toBe(3);
  });
});

describe("hooks", () => {
  it("beforeToolCall can block: no execution, the reason reaches the model", async () => {
    const { ofType, provider } = await runScripted(
      [{ toolCalls: [{ id: "a", name: "echo", arguments: '{"text":"rm -rf"}' }] }, { content: "ok" }],
      [echoTool()],
      { hooks: { beforeToolCall: ({ args }) => (String(args.text).includes("rm") ? { block: true, reason: "dangerous" } : undefined) } },
    );
    expect(ofType("toolExecutionStart")).toHaveLength(0);
    expect(ofType("toolCallRejected")[0].reason).toContain("dangerous");
    expect(textOf(toolMessages(provider.requests[1].messages)[0].content)).toContain("dangerous");
  });

  it("beforeToolCall can replace args; a throwing hook blocks without crashing", async () => {
    let n = 0;
    const { ofType } = await runScripted(
      [{ toolCalls: [{ id: "a", name: "echo", arguments: '{"text":"x"}' }, { id: "b", name: "echo", arguments: '{"text":"y"}' }] }, { content: "ok" }],
      [echoTool()],
      {
        hooks: {
          beforeToolCall: () => {
            n += 1;
            if (n === 2) throw new Error("hook broke");
            return { args: { text: "replaced" } };
          },
        },
      },
    );
    expect(textOf(ofType("toolExecutionEnd")[0].result.content)).toBe("echo:replaced");
    expect(ofType("toolCallRejected")[0]).toMatchObject({ toolCallId: "b", reason: expect.stringContaining("hook broke") });
  });

  it("beforeToolCall is never reached for a call that failed validation", async () => {
    const seen: string[] = [];
    await runScripted([{ toolCalls: [{ id: "a", name: "echo", arguments: '{"text":1,"bad":true}' }] }, { content: "ok" }], [echoTool()], {
      hooks: { beforeToolCall: ({ toolCall }) => void seen.push(toolCall.id) },
    });
    expect(seen).toEqual([]);
  });

  it("afterToolCall rewrites content and sets terminate: no further model call", async () => {
    const { result, provider, ofType } = await runScripted(
      [{ toolCalls: [{ id: "a", name: "echo", arguments: '{"text":"x"}' }] }, { content: "never asked" }],
      [echoTool()],
      { hooks: { afterToolCall: () => ({ content: [textContent("rewritten")], details: { audited: true }, terminate: true }) } },
    );
    expect(result.stopReason).toBe("terminated");
    expect(provider.requests).toHaveLength(1);
    expect(result.text).toBe("rewritten");
    const [end] = ofType("toolExecutionEnd");
    expect(textOf(end.result.content)).toBe("rewritten");
    expect(end.result.details).toEqual({ audited: true });
  });

  it("afterToolCall may flip isError; a throwing afterToolCall becomes an error result", async () => {
    let n = 0;
    const { ofType } = await runScripted(
      [{ toolCalls: [{ id: "a", name: "echo", arguments: "{}" }, { id: "b", name: "echo", arguments: "{}" }] }, { content: "ok" }],
      [echoTool()],
      {
        hooks: {
          afterToolCall: () => {
            n += 1;
            if (n === 1) return { isError: true };
            throw new Error("audit down");
          },
        },
      },
    );
    const ends = ofType("toolExecutionEnd");
    expect(ends.map((e) => e.isError)).toEqual([true, true]);
    expect(textOf(ends[1].result.content)).toContain("audit down");
  });
});

describe("ending a run", () => {
  it("a terminate result ends the run after its batch, without another model call", async () => {
    const log: string[] = [];
    const finisher = defineTool({ ...echoTool("finish"), execute: async () => toolResult("final report", { terminate: true }) });
    const { result, provider } = await runScripted(
      [{ toolCalls: [{ id: "f", name: "finish", arguments: "{}" }, { id: "g1", name: "gate", arguments: "{}" }] }, { content: "unused" }],
      [finisher, gateTool("gate", log, 5)],
    );
    expect(result.stopReason).toBe("terminated");
    expect(result.text).toBe("final report");
    expect(log).toEqual(["start:g1", "end:g1"]);
    expect(provider.requests).toHaveLength(1);
  });

  it("abort mid-tool: every call gets a result, stopReason aborted", async () => {
    const controller = new AbortController();
    const hang = defineTool({
      ...echoTool("hang"),
      execute: (_id, _args, signal) => new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(new Error("stopped")))),
    });
    const deaf = defineTool({ ...echoTool("deaf"), execute: () => new Promise<never>(() => {}) });
    setTimeout(() => controller.abort(), 30);
    for (const mode of ["parallel", "sequential"] as const) {
      const c = new AbortController();
      setTimeout(() => c.abort(), 30);
      const { result, ofType } = await runScripted(
        [{ toolCalls: [{ id: "h", name: "hang", arguments: "{}" }, { id: "d", name: "deaf", arguments: "{}" }, { id: "e", name: "echo", arguments: "{}" }] }],
        [hang, deaf, echoTool()],
        { signal: c.signal, toolExecution: mode },
      );
      expect(result.stopReason).toBe("aborted");
      const results = toolMessages(result.messages);
      expect(results.map((m) => m.toolCallId)).toEqual(["h", "d", "e"]);
      expect(results.slice(0, 2).every((m) => m.isError)).toBe(true);
      expect(ofType("agentEnd")).toHaveLength(1);
    }
  });

  it("stops at maxTurns with its stop reason", async () => {
    const loop = Array.from({ length: 5 }, (_, i) => ({ toolCalls: [{ name: "echo", arguments: `{"text":"${i}"}` }] }));
    const { result, ofType } = await runScripted(loop, [echoTool()], { limits: { maxTurns: 3 } });
    expect(result.stopReason).toBe("maxTurns");
    expect(result.turns).toBe(3);
    expect(ofType("agentEnd")[0]).toMatchObject({ stopReason: "maxTurns", turns: 3 });
  });

  it("a tool that outlives toolTimeoutMs gets an error result, and the run goes on", async () => {
    const slow = defineTool({ ...echoTool("slow"), execute: () => new Promise<never>(() => {}) });
    const quick = defineTool({ ...echoTool("quick"), timeoutMs: 20, execute: () => new Promise<never>(() => {}) });
    const { result, provider } = await runScripted(
      [{ toolCalls: [{ id: "s", name: "slow", arguments: "{}" }, { id: "q", name: "quick", arguments: "{}" }] }, { content: "ok" }],
      [slow, quick],
      { limits: { toolTimeoutMs: 40 }, toolExecution: "parallel" },
    );
    expect(result.stopReason).toBe("completed");
    const texts = toolMessages(provider.requests[1].messages).map((m) => textOf(m.content));
    expect(texts[0]).toContain("timed out after 40 ms");
    expect(texts[1]).toContain("timed out after 20 ms");
  });

  it("runTimeoutMs stops the run with stopReason timeout", async () => {
    const { result } = await runScripted([{ content: "late", delayMs: 2000 }], [], { limits: { runTimeoutMs: 30 } });
    expect(result.stopReason).toBe("timeout");
  });

  it("the token budget stops the run after the response that spends it", async () => {
    const { result, provider } = await runScripted(
      [{ toolCalls: [{ name: "echo", arguments: "{}" }], usage: { promptTokens: 90, completionTokens: 20 } }, { content: "unused" }],
      [echoTool()],
      { limits: { maxTokens: 100 } },
    );
    expect(result.stopReason).toBe("budget");
    expect(provider.requests).toHaveLength(1);
    expect(toolMessages(result.messages)[0].isError).toBe(true);
  });

  it("detects a loop of identical calls", async () => {
    const same = Array.from({ length: 6 }, () => ({ toolCalls: [{ name: "echo", arguments: '{"text":"same"}' }] }));
    const { result, ofType } = await runScripted(same, [echoTool()], { limits: { loopDetection: 3 } });
    expect(result.stopReason).toBe("loopDetected");
    expect(ofType("toolExecutionStart")).toHaveLength(2);
  });

  it("a model error ends the run with stopReason error and the message", async () => {
    const { result, ofType } = await runScripted([{ error: new Error("server exploded") }], []);
    expect(result.stopReason).toBe("error");
    expect(ofType("agentEnd")[0].error).toContain("server exploded");
  });

  it("a response cut by the length limit is not executed; its calls get error results", async () => {
    const { ofType, provider } = await runScripted(
      [{ toolCalls: [{ id: "cut", name: "echo", arguments: '{"text":"hal' }], finishReason: "length" }, { content: "ok" }],
      [echoTool()],
    );
    expect(ofType("toolExecutionStart")).toHaveLength(0);
    expect(textOf(toolMessages(provider.requests[1].messages)[0].content)).toContain("length limit");
    expect(textOf(toolMessages(provider.requests[1].messages)[0].content)).toContain('Received arguments: {"text":"hal');
  });

  it("a final answer cut by the length limit ends with maxTokens; its text is the run's text", async () => {
    const { result, ofType } = await runScripted([{ content: "half an ans", finishReason: "length" }], []);
    expect(result).toMatchObject({ stopReason: "maxTokens", text: "half an ans", finishReason: "length", turns: 1 });
    expect(ofType("agentEnd")[0]).toMatchObject({ stopReason: "maxTokens" });
    expect(ofType("agentEnd")[0].error).toContain("token limit");
  });

  it("finishReason is the last response's, and null when there was none", async () => {
    expect((await runScripted([{ content: "ok" }], [])).result.finishReason).toBe("stop");
    expect((await runScripted([{ error: new Error("down") }], [])).result.finishReason).toBeNull();
  });
});

describe("the alternative tool_call block", () => {
  it("is taken from the message field", async () => {
    const { ofType } = await runScripted([{ toolCallBlock: { name: "echo", arguments: { text: "blk" } } }, { content: "ok" }], [echoTool()]);
    expect(textOf(ofType("toolExecutionEnd")[0].result.content)).toBe("echo:blk");
  });

  it("is taken from content that is a (fenced) JSON tool_call object when text tool calls are on (model.textToolCalls)", async () => {
    const content = '```json\n{"tool_call": {"name": "echo", "arguments": {"text": "fenced"}}}\n```';
    const script = [{ content }, { content: "ok" }];
    const { ofType, result } = await runScripted(script, [echoTool()], { provider: withTextToolCalls(createScriptedProvider(script)) });
    expect(textOf(ofType("toolExecutionEnd")[0].result.content)).toBe("echo:fenced");
    expect(ofType("messageEnd")[0].message.toolCalls).toHaveLength(1);
    expect(result.text).toBe("ok");
  });

  it("content that is a JSON tool_call object is an answer when text tool calls are off (the default)", async () => {
    const content = '{"tool_call": {"name": "echo", "arguments": {"text": "x"}}}';
    const { result, ofType } = await runScripted([{ content }], [echoTool()]);
    expect(ofType("toolExecutionStart")).toHaveLength(0);
    expect(result).toMatchObject({ stopReason: "completed", text: content });
  });

  it("plain text that merely mentions tool_call is an answer", async () => {
    const { result } = await runScripted([{ content: "use the tool_call block" }], [echoTool()]);
    expect(result).toMatchObject({ stopReason: "completed", text: "use the tool_call block" });
  });
});

describe("the token budget and a final answer", () => {
  it("a final answer that spends the budget is still delivered (completed)", async () => {
    const { result } = await runScripted([{ content: "the answer", usage: { promptTokens: 500, completionTokens: 500 } }], [], { limits: { maxTokens: 100 } });
    expect(result).toMatchObject({ stopReason: "completed", text: "the answer" });
  });
});
