import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIProvider, type OpenAIProviderOptions } from "../../src/provider/openai.js";
import { retryDelayMs } from "../../src/provider/retry.js";
import { ModelError, type ChatMessage, type ModelRequest, type RetryInfo, type ToolSpec } from "../../src/provider/types.js";
import { reply, startChatServer, type ChatScript, type ChatServer } from "../support/chat-server.js";

const weather: ToolSpec = {
  name: "getWeather",
  description: "Weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const clock: ToolSpec = { name: "getTime", description: "Time in a zone", parameters: { type: "object", properties: {} } };

let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(script: ChatScript, options: Partial<OpenAIProviderOptions> = {}) {
  server = await startChatServer(script);
  const provider = createOpenAIProvider({ model: "gpt-test", baseURL: server.url, apiKey: "sk-test-key-123", ...options });
  return { server, provider };
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest & { deltas: string[]; retries: RetryInfo[] } {
  const deltas: string[] = [];
  const retries: RetryInfo[] = [];
  return {
    messages: [
      { role: "system", content: "You are terse." },
      { role: "user", content: "Weather in Oslo?" },
    ],
    tools: [weather, clock],
    signal: new AbortController().signal,
    onTextDelta: (delta) => deltas.push(delta),
    onRetry: (info) => retries.push(info),
    deltas,
    retries,
    ...overrides,
  };
}

async function failure(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

describe("openai provider: responses", () => {
  it("reads a non-streamed JSON completion with tool calls, usage and a tool_call block", async () => {
    const { server, provider } = await setup(
      [
        reply.json({
          content: "Checking.",
          toolCalls: [{ id: "call_a", name: "getWeather", arguments: '{"city":"Oslo"}' }],
          usage: { prompt_tokens: 12, completion_tokens: 5 },
          extraMessage: { tool_call: { name: "getTime", arguments: {} } },
        }),
      ],
      { stream: false },
    );
    const req = request();
    const response = await provider.complete(req);
    expect(response.message).toEqual({
      role: "assistant",
      content: "Checking.",
      toolCalls: [{ id: "call_a", name: "getWeather", arguments: '{"city":"Oslo"}' }],
      toolCallBlock: { name: "getTime", arguments: {} },
    });
    expect(response.usage).toEqual({ promptTokens: 12, completionTokens: 5, totalTokens: 17 });
    expect(response.finishReason).toBe("tool_calls");
    expect(req.deltas).toEqual(["Checking."]);
    expect(server.requests[0].stream).toBeUndefined();
    expect(server.requests[0].stream_options).toBeUndefined();
    server.assertClean();
  });

  it("streams text, reports every delta and takes usage from the final chunk", async () => {
    const { server, provider } = await setup([
      reply.stream({ content: "It is sunny in Oslo today.", textPieceSize: 4, usage: { prompt_tokens: 20, completion_tokens: 7 } }),
    ]);
    const req = request();
    const response = await provider.complete(req);
    expect(response.message.content).toBe("It is sunny in Oslo today.");
    expect(response.message.toolCalls).toEqual([]);
    expect(req.deltas.length).toBe(7);
    expect(req.deltas.join("")).toBe("It is sunny in Oslo today.");
    expect(response.usage).toEqual({ promptTokens: 20, completionTokens: 7, totalTokens: 27 });
    expect(response.finishReason).toBe("stop");
    expect(server.requests[0]).toMatchObject({ model: "gpt-test", stream: true, stream_options: { include_usage: true } });
    expect(server.received[0].headers.authorization).toBe("Bearer sk-test-key-123");
    server.assertClean();
  });

  it("assembles tool-call arguments split across many chunks", async () => {
    const args = JSON.stringify({ city: "Oslo", units: "metric", days: [1, 2, 3] });
    const { server, provider } = await setup([
      reply.stream({ toolCalls: [{ id: "call_w", name: "getWeather", arguments: args }], argumentPieceSize: 2 }),
    ]);
    const req = request();
    const response = await provider.complete(req);
    expect(response.message.toolCalls).toEqual([{ id: "call_w", name: "getWeather", arguments: args }]);
    expect(response.message.content).toBe("");
    expect(response.finishReason).toBe("tool_calls");
    expect(req.deltas).toEqual([]);
    expect(response.usage).toEqual({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });
    server.assertClean();
  });

  it("assembles two tool calls in one response, also when their deltas interleave", async () => {
    const calls = [
      { id: "call_1", name: "getWeather", arguments: '{"city":"Oslo"}' },
      { id: "call_2", name: "getTime", arguments: '{"zone":"Europe/Oslo"}' },
    ];
    const { server, provider } = await setup([
      reply.stream({ content: "Two calls.", toolCalls: calls }),
      reply.stream({ toolCalls: calls, interleaveToolCalls: true, argumentPieceSize: 3 }),
    ]);
    expect((await provider.complete(request())).message.toolCalls).toEqual(calls);
    expect((await provider.complete(request())).message.toolCalls).toEqual(calls);
    server.assertClean();
  });

  it("accepts a plain JSON completion from a server that ignores stream: true", async () => {
    const { server, provider } = await setup([reply.json({ content: "whole answer", usage: { prompt_tokens: 3, completion_tokens: 2 } })]);
    const req = request();
    const response = await provider.complete(req);
    expect(response.message.content).toBe("whole answer");
    expect(req.deltas).toEqual(["whole answer"]);
    expect(response.usage.totalTokens).toBe(5);
    expect(server.requests[0].stream).toBe(true);
    server.assertClean();
  });

  it("reports finishReason unknown when the stream never names one", async () => {
    const { server, provider } = await setup([reply.stream({ content: "ok", finishReason: null })]);
    const response = await provider.complete(request());
    expect(response.message.content).toBe("ok");
    expect(response.finishReason).toBe("unknown");
    server.assertClean();
  });
});

describe("openai provider: requests", () => {
  it("sends a conversation with tool calls and image results that is valid against the official schema", async () => {
    const messages: ChatMessage[] = [
      { role: "system", content: "sys" },
      { role: "user", content: "Show me the chart and the weather" },
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "c1", name: "getWeather", arguments: '{"city":"Oslo"}' },
          { id: "c2", name: "getTime", arguments: "{}" },
        ],
      },
      {
        role: "tool",
        toolCallId: "c1",
        toolName: "getWeather",
        isError: false,
        content: [
          { type: "text", text: "sunny" },
          { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
        ],
      },
      { role: "tool", toolCallId: "c2", toolName: "getTime", isError: true, content: [{ type: "text", text: "boom" }] },
    ];
    const { server, provider } = await setup([reply.stream({ content: "done" })], { temperature: 0, maxTokens: 256 });
    await provider.complete(request({ messages }));
    server.assertClean();
    const sent = server.requests[0];
    expect(sent.temperature).toBe(0);
    expect(sent.max_tokens).toBe(256);
    expect(sent.tools[0]).toEqual({ type: "function", function: { name: "getWeather", description: weather.description, parameters: weather.parameters } });
    expect(sent.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user", "assistant", "tool", "tool", "user"]);
    expect(sent.messages[2]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "c1", type: "function", function: { name: "getWeather", arguments: '{"city":"Oslo"}' } },
        { id: "c2", type: "function", function: { name: "getTime", arguments: "{}" } },
      ],
    });
    expect(sent.messages[3].tool_call_id).toBe("c1");
    expect(sent.messages[3].content).toMatch(/^sunny\n\[image 1 \(image\/png\)/);
    expect(sent.messages[5].content[1]).toEqual({ type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } });
  });

  it("describeRequest returns the exact body without sending anything", () => {
    const provider = createOpenAIProvider({ model: "gpt-x", apiKey: "sk-secret-abc", temperature: 0.5 });
    const { signal: _signal, ...rest } = request({ tools: [weather] });
    const body = provider.describeRequest!(rest);
    expect(body).toEqual({
      model: "gpt-x",
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Weather in Oslo?" },
      ],
      tools: [{ type: "function", function: { name: "getWeather", description: weather.description, parameters: weather.parameters } }],
      temperature: 0.5,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(JSON.stringify(body)).not.toContain("sk-secret-abc");
    const bare = createOpenAIProvider({ model: "m", stream: false }).describeRequest!({ messages: [{ role: "user", content: "x" }], tools: [] });
    expect(bare).toEqual({ model: "m", messages: [{ role: "user", content: "x" }] });
  });
});

describe("openai provider: retries and failures", () => {
  it("retries a 500 and succeeds, reporting the retry", async () => {
    const { server, provider } = await setup([reply.error(500, "upstream exploded"), reply.stream({ content: "fine" })]);
    const req = request();
    const response = await provider.complete(req);
    expect(response.message.content).toBe("fine");
    expect(req.retries).toHaveLength(1);
    expect(req.retries[0]).toMatchObject({ attempt: 1, status: 500 });
    expect(req.retries[0].message).toContain("upstream exploded");
    expect(req.retries[0].delayMs).toBeGreaterThan(0);
    expect(server.requests).toHaveLength(2);
    server.assertClean();
  });

  it("does not retry a 400 and throws a ModelError with the status and the server's message", async () => {
    const { server, provider } = await setup([reply.error(400, "model 'gpt-test' does not support tools")]);
    const req = request();
    const error = await failure(provider.complete(req));
    expect(error.status).toBe(400);
    expect(error.message).toContain("400");
    expect(error.message).toContain("does not support tools");
    expect(error.message).toContain("gpt-test");
    expect(req.retries).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it("honours retry-after-ms on a 429", async () => {
    const { provider } = await setup([reply.error(429, "slow down", { "retry-after-ms": "40" }), reply.stream({ content: "ok" })]);
    const req = request();
    expect((await provider.complete(req)).message.content).toBe("ok");
    expect(req.retries).toEqual([{ attempt: 1, delayMs: 40, status: 429, message: expect.stringContaining("slow down") }]);
  });

  it("gives up after maxRetries with the last status", async () => {
    const busy = () => reply.error(503, "overloaded", { "retry-after-ms": "1" });
    const { server, provider } = await setup([busy(), busy(), busy()], { maxRetries: 2 });
    const req = request();
    const error = await failure(provider.complete(req));
    expect(error.status).toBe(503);
    expect(error.message).toMatch(/503.*overloaded.*after 3 attempts/);
    expect(req.retries.map((r) => r.attempt)).toEqual([1, 2]);
    expect(server.requests).toHaveLength(3);
  });

  it("retries a stream cut before any text was emitted", async () => {
    const spec = { content: "hello there" };
    const { server, provider } = await setup([reply.cut(spec, 1, "destroy"), reply.cut(spec, 1, "end"), reply.stream(spec)], { maxRetries: 2 });
    const req = request();
    const response = await provider.complete(req);
    expect(response.message.content).toBe("hello there");
    expect(req.deltas.join("")).toBe("hello there");
    expect(req.retries).toHaveLength(2);
    expect(req.retries.every((r) => r.status === null && /stream/.test(r.message))).toBe(true);
    expect(server.requests).toHaveLength(3);
    server.assertClean();
  });

  it("fails cleanly without retry when a stream is cut after text was emitted", async () => {
    const { server, provider } = await setup([reply.cut({ content: "partial answer", textPieceSize: 4 }, 3, "end"), reply.stream({ content: "x" })]);
    const req = request();
    const error = await failure(provider.complete(req));
    expect(error.status).toBeNull();
    expect(error.message).toMatch(/cut before it was complete|ended before it was complete/);
    expect(req.deltas.join("")).toBe("partial ");
    expect(req.retries).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it("times out on a server that never answers", async () => {
    const { provider } = await setup([reply.hang()], { timeoutMs: 150, maxRetries: 0 });
    const error = await failure(provider.complete(request()));
    expect(error.message).toContain("no response from the server for 150 ms");
    expect(error.status).toBeNull();
  });

  it("reports a refused connection after retrying it", async () => {
    const closed = await startChatServer([]);
    const url = closed.url;
    await closed.close();
    const provider = createOpenAIProvider({ model: "m", baseURL: url, apiKey: "k-1234", maxRetries: 1 });
    const req = request();
    const error = await failure(provider.complete(req));
    expect(error.status).toBeNull();
    expect(error.message).toMatch(/connection failed: .*ECONNREFUSED/);
    expect(req.retries).toHaveLength(1);
    expect(req.retries[0].status).toBeNull();
  });

  it("never puts the API key in error messages", async () => {
    const key = "sk-live-SECRET-9f8e7d";
    const { provider } = await setup([reply.error(401, `Incorrect API key provided: ${key}.`)], { apiKey: key });
    const req = request();
    const error = await failure(provider.complete(req));
    expect(error.status).toBe(401);
    expect(error.message).toContain("Incorrect API key provided");
    expect(error.message).not.toContain(key);
    expect(JSON.stringify(req.retries)).not.toContain(key);
  });
});

describe("openai provider: abort", () => {
  const waitFor = async (check: () => boolean) => {
    while (!check()) await new Promise((r) => setTimeout(r, 5));
  };

  it("cancels a pending request when the signal aborts", async () => {
    const { server, provider } = await setup([reply.hang()]);
    const controller = new AbortController();
    const pending = provider.complete(request({ signal: controller.signal }));
    await waitFor(() => server.received.length === 1);
    controller.abort();
    const error = await failure(pending);
    expect(error.message).toContain("aborted");
    expect(server.requests).toHaveLength(1);
  });

  it("cancels a running stream and a retry wait", async () => {
    const { server, provider } = await setup(
      [reply.stream({ content: "slow words here" }, { chunkDelayMs: 200 }), reply.error(500, "x", { "retry-after-ms": "20000" })],
    );
    const controller = new AbortController();
    const req = request({ signal: controller.signal });
    const streaming = provider.complete(req);
    await waitFor(() => req.deltas.length > 0);
    controller.abort();
    expect((await failure(streaming)).message).toContain("aborted");

    const second = new AbortController();
    const retrying = request({ signal: second.signal });
    const waiting = provider.complete(retrying);
    await waitFor(() => retrying.retries.length === 1);
    second.abort();
    expect((await failure(waiting)).message).toContain("aborted");
    expect(retrying.retries[0].delayMs).toBe(20000);
    expect(server.requests).toHaveLength(2);
  });
});

describe("retryDelayMs", () => {
  it("uses the server's hints, capped at 30 s, else backs off exponentially", () => {
    expect(retryDelayMs(1, new Headers({ "retry-after-ms": "250" }))).toBe(250);
    expect(retryDelayMs(1, new Headers({ "retry-after": "2" }))).toBe(2000);
    expect(retryDelayMs(1, new Headers({ "retry-after": "3600" }))).toBe(30000);
    const first = retryDelayMs(1);
    const third = retryDelayMs(3);
    expect(first).toBeGreaterThanOrEqual(375);
    expect(first).toBeLessThanOrEqual(500);
    expect(third).toBeGreaterThanOrEqual(1500);
    expect(third).toBeLessThanOrEqual(2000);
  });
});
