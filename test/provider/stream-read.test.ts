/**
 * The lean request/response path of the openai provider: the body goes out
 * as bytes that equal `JSON.stringify(buildRequestBody(…))`, the content-type is still
 * application/json, and the SSE body is read with one reader that stops at [DONE] — also when the
 * server keeps the response open after it, or sends more after it.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIProvider } from "../../src/provider/openai.js";
import { tracingFetch, type HttpExchange } from "../../src/provider/http-trace.js";
import { FetchResponse } from "../../src/provider/http/response.js";
import { SseParser, sseData, StreamAssembler, StreamServerError } from "../../src/provider/openai-stream.js";
import type { ChatMessage, ModelRequest, ToolSpec } from "../../src/provider/types.js";
import { buildRequestBody, serializeRequestBody, serializeRequestBytes, type BodySettings } from "../../src/provider/wire.js";
import { preloadValidator, validateAgainstSchema } from "../../src/tools/validate.js";

const TOOLS: ToolSpec[] = [{ name: "noop", description: "Does nothing — fast ✓", parameters: { type: "object", properties: { i: { type: "integer" } } } }];
const SETTINGS: BodySettings = { model: "m-ü", stream: true, temperature: 0.5 };

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const TEXT_REPLY = chunk({ role: "assistant", content: "" }) + chunk({ content: "hello " }) + chunk({ content: "world" }) + chunk({}, "stop");

interface Seen {
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server whose every reply is written by `answer`; returns its base URL and what it received. */
async function serve(answer: (res: ServerResponse) => void): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", () => {
      seen.push({ headers: req.headers, body: Buffer.concat(parts).toString("utf8") });
      res.writeHead(200, { "content-type": "text/event-stream" });
      answer(res);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen };
}

function request(messages: ChatMessage[], deltas: string[] = []): ModelRequest {
  return { messages, tools: TOOLS, signal: new AbortController().signal, onTextDelta: (d) => deltas.push(d) };
}

const conversation = (): ChatMessage[] => [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Say hello 👋" },
];

describe("openai provider: stream reading", () => {
  it("answers at [DONE] even when the server keeps the response open after it", async () => {
    const { url } = await serve((res) => res.write(`${TEXT_REPLY}data: [DONE]\n\n`));
    const provider = createOpenAIProvider({ model: "m", baseURL: url, apiKey: "k-1234", maxRetries: 0 });
    const deltas: string[] = [];
    const response = await provider.complete(request(conversation(), deltas));
    expect(response.message.content).toBe("hello world");
    expect(response.finishReason).toBe("stop");
    expect(deltas).toEqual(["hello ", "world"]);
  });

  it("the --debug trace of a stream the server keeps open after [DONE] has no error; a body cancelled otherwise has one", async () => {
    const exchanges: HttpExchange[] = [];
    const { url } = await serve((res) => res.write(`${TEXT_REPLY}data: [DONE]\n\n`));
    const provider = createOpenAIProvider({ model: "m", baseURL: url, apiKey: "k-1234", maxRetries: 0, onHttp: (exchange) => exchanges.push(exchange) });
    expect((await provider.complete(request(conversation()))).message.content).toBe("hello world");
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(exchanges).toHaveLength(1);
    expect(exchanges[0]).toMatchObject({ status: 200 });
    expect(exchanges[0].error).toBeUndefined();
    // A body cancelled for any other reason is reported as not read to its end.
    const traced: HttpExchange[] = [];
    const inner = (async () => new FetchResponse("data: partial", { status: 200 })) as unknown as typeof fetch;
    const response = await tracingFetch(inner, (exchange) => traced.push(exchange), () => 0)("http://example.invalid/x");
    await response.body!.getReader().cancel();
    expect(traced.map((exchange) => exchange.error)).toEqual(["the body was not read to its end"]);
  });

  it("ignores whatever follows [DONE], even an invalid event", async () => {
    const { url } = await serve((res) => res.end(`${chunk({ content: "ok" })}data: [DONE]\n\ndata: {not json\n\n${chunk({ content: "late" })}`));
    const provider = createOpenAIProvider({ model: "m", baseURL: url, apiKey: "k-1234", maxRetries: 0 });
    const deltas: string[] = [];
    const response = await provider.complete(request(conversation(), deltas));
    expect(response.message.content).toBe("ok");
    expect(deltas).toEqual(["ok"]);
  });

  it("reads a stream that ends with a finish reason and no [DONE], split at odd byte boundaries", async () => {
    const bytes = Buffer.from(TEXT_REPLY, "utf8");
    const { url } = await serve((res) => {
      let at = 0;
      const next = () => {
        if (at >= bytes.length) return res.end();
        res.write(bytes.subarray(at, at + 7));
        at += 7;
        setImmediate(next);
      };
      next();
    });
    const provider = createOpenAIProvider({ model: "m", baseURL: url, apiKey: "k-1234", maxRetries: 0 });
    const response = await provider.complete(request(conversation()));
    expect(response.message.content).toBe("hello world");
  });

  it("sends the body as the exact JSON of the conversation, with content-type application/json, request after request", async () => {
    const { url, seen } = await serve((res) => res.end(`${TEXT_REPLY}data: [DONE]\n\n`));
    const provider = createOpenAIProvider({ model: "m-ü", baseURL: url, apiKey: "k-1234", maxRetries: 0, temperature: 0.5 });
    const messages = conversation();
    for (let turn = 1; turn <= 3; turn++) {
      await provider.complete(request(messages));
      messages.push({ role: "assistant", content: "", toolCalls: [{ id: `c${turn}`, name: "noop", arguments: `{"i":${turn}}` }] });
      messages.push({ role: "tool", toolCallId: `c${turn}`, toolName: "noop", content: [{ type: "text", text: `ok ✓ ${turn}` }], isError: false });
    }
    expect(seen).toHaveLength(3);
    for (const received of seen) {
      expect(received.headers["content-type"]).toBe("application/json");
      expect(Number(received.headers["content-length"])).toBe(Buffer.byteLength(received.body));
    }
    expect(JSON.parse(seen[2].body)).toEqual(buildRequestBody({ model: "m-ü", stream: true, temperature: 0.5 }, messages.slice(0, 6), TOOLS));
  });
});

describe("serializeRequestBytes", () => {
  const expectExact = (messages: ChatMessage[]) => {
    const expected = JSON.stringify(buildRequestBody(SETTINGS, messages, TOOLS));
    expect(serializeRequestBytes(SETTINGS, messages, TOOLS).equals(Buffer.from(expected, "utf8"))).toBe(true);
    expect(serializeRequestBody(SETTINGS, messages, TOOLS)).toBe(expected);
  };

  it("equals the UTF-8 of JSON.stringify(buildRequestBody) as a conversation grows past its first buffer", () => {
    const messages = conversation();
    expectExact(messages);
    for (let i = 1; i <= 60; i++) {
      messages.push({ role: "assistant", content: i % 7 === 0 ? `thinking… ${"é".repeat(i)}` : "", toolCalls: [{ id: `c${i}`, name: "noop", arguments: `{"i":${i}}` }] });
      messages.push({ role: "tool", toolCallId: `c${i}`, toolName: "noop", content: [{ type: "text", text: `result ${i} ${"x".repeat(i * 3)}` }], isError: false });
      expectExact(messages);
    }
  });

  it("stays exact with image results, a message edited in place and a shortened conversation", () => {
    const messages = conversation();
    messages.push({ role: "assistant", content: "", toolCalls: [{ id: "a", name: "noop", arguments: "{}" }] });
    messages.push({ role: "tool", toolCallId: "a", toolName: "noop", content: [{ type: "image", data: "AAAA", mimeType: "image/png" }], isError: false });
    expectExact(messages);
    messages.push({ role: "assistant", content: "done", toolCalls: [] });
    expectExact(messages);
    (messages[1] as { content: string }).content = "edited 😀";
    expectExact(messages);
    messages.splice(2);
    expectExact(messages);
  });

  it("does not change a body already handed out when the conversation grows", () => {
    const messages = conversation();
    const first = serializeRequestBytes(SETTINGS, messages, TOOLS);
    const copy = Buffer.from(first);
    for (let i = 0; i < 40; i++) messages.push({ role: "user", content: `more ${i} ${"y".repeat(100)}` });
    serializeRequestBytes(SETTINGS, messages, TOOLS);
    expect(first.equals(copy)).toBe(true);
  });
});

describe("SseParser", () => {
  it("splits events across pieces and line endings exactly like sseData", async () => {
    const pieces = [": comment\n", 'data: {"a"', ":1}\r", "\n\r\ndata: [DO", "NE]\n\n", "data: line 1\ndata:line 2\n\n", "data: tail"];
    const parsed: string[] = [];
    const parser = new SseParser((data) => parsed.push(data));
    for (const piece of pieces) parser.push(piece);
    parser.end();
    async function* bytes() {
      for (const piece of pieces) yield new TextEncoder().encode(piece);
    }
    const viaGenerator: string[] = [];
    for await (const data of sseData(bytes())) viaGenerator.push(data);
    expect(parsed).toEqual(['{"a":1}', "[DONE]", "line 1\nline 2", "tail"]);
    expect(viaGenerator).toEqual(parsed);
  });
});

describe("preloadValidator", () => {
  it("loads ajv ahead of time; validation still applies defaults, coercion and formats", async () => {
    preloadValidator();
    const schema = {
      type: "object",
      properties: { n: { type: "integer" }, when: { type: "string", format: "date" }, mode: { type: "string", default: "fast" } },
      required: ["n"],
    };
    const args: Record<string, unknown> = { n: "42", when: "2024-02-30x" };
    const failures = await validateAgainstSchema(schema, args);
    expect(args).toMatchObject({ n: 42, mode: "fast" });
    expect(failures).toEqual(['when: must match format "date"']);
  });
});

describe("error events inside a stream", () => {
  const thrown = (data: string, event: string) => {
    try {
      new StreamAssembler(() => {}).pushData(data, event);
    } catch (error) {
      expect(error).toBeInstanceOf(StreamServerError);
      return (error as Error).message;
    }
    throw new Error("no error thrown");
  };

  it("read the server's message from every JSON body shape, else keep the data as text", () => {
    expect(thrown('{"error":{"message":"rate limited"}}', "error")).toBe("rate limited");
    expect(thrown('{"message":"slot unavailable"}', "error")).toBe("slot unavailable");
    expect(thrown('{"detail":"model is loading"}', "error")).toBe("model is loading");
    expect(thrown('[{"error":{"message":"first of a list"}}]', "error")).toBe("first of a list");
    expect(thrown("upstream closed\n", "error")).toBe("upstream closed");
    expect(thrown("", "error")).toBe("(no error message)");
  });
});
