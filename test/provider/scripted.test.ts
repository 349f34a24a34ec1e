import { describe, expect, it } from "vitest";
import { createScriptedProvider } from "../../src/provider/scripted.js";
import { ModelError, type ChatMessage, type ModelRequest } from "../../src/provider/types.js";

function request(messages: ChatMessage[] = [{ role: "user", content: "hi" }], signal = new AbortController().signal) {
  const deltas: string[] = [];
  const req: ModelRequest = { messages, tools: [], signal, onTextDelta: (d) => deltas.push(d) };
  return Object.assign(req, { deltas });
}

describe("scripted provider", () => {
  it("returns its turns in order and records what each call received", async () => {
    const provider = createScriptedProvider([
      { toolCalls: [{ name: "getWeather", arguments: { city: "Oslo" } }, { id: "mine", name: "getTime", arguments: "{}" }] },
      (req) => ({ content: `you said ${req.messages.length} things`, usage: { promptTokens: 3, completionTokens: 4 } }),
    ]);
    expect(provider.model).toBe("scripted");
    expect(provider.remaining).toBe(2);

    const messages: ChatMessage[] = [{ role: "user", content: "hi" }];
    const first = await provider.complete(request(messages));
    expect(first.message.toolCalls).toEqual([
      { id: "call_1_1", name: "getWeather", arguments: '{"city":"Oslo"}' },
      { id: "mine", name: "getTime", arguments: "{}" },
    ]);
    expect(first.finishReason).toBe("tool_calls");
    messages.push({ role: "assistant", content: "", toolCalls: first.message.toolCalls });

    const req = request(messages);
    const second = await provider.complete(req);
    expect(second.message.content).toBe("you said 2 things");
    expect(second.usage).toEqual({ promptTokens: 3, completionTokens: 4, totalTokens: 7 });
    expect(second.finishReason).toBe("stop");
    expect(req.deltas).toEqual(["you said 2 things"]);

    expect(provider.requests.map((r) => r.messages.length)).toEqual([1, 2]);
    expect(provider.remaining).toBe(0);
  });

  it("passes a toolCallBlock and a finish reason through", async () => {
    const provider = createScriptedProvider([{ toolCallBlock: { name: "x", arguments: {} }, finishReason: "length" }]);
    const response = await provider.complete(request());
    expect(response.message.toolCallBlock).toEqual({ name: "x", arguments: {} });
    expect(response.finishReason).toBe("length");
  });

  it("throws a scripted error", async () => {
    const boom = new ModelError("HTTP 500: boom", 500);
    const provider = createScriptedProvider([{ error: boom }]);
    await expect(provider.complete(request())).rejects.toBe(boom);
  });

  it("rejects when aborted during its delay", async () => {
    const controller = new AbortController();
    const provider = createScriptedProvider([{ content: "late", delayMs: 10_000 }]);
    const pending = provider.complete(request(undefined, controller.signal));
    controller.abort();
    await expect(pending).rejects.toThrow(/aborted/);
  });

  it("says so when the script runs out", async () => {
    const provider = createScriptedProvider([{ content: "one" }]);
    await provider.complete(request());
    await expect(provider.complete(request())).rejects.toThrow("scripted provider has 1 turns; the run asked for turn 2");
  });
});
