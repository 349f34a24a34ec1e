/**
 * The server's error text is never lost, whatever the body looks like (docs/reliability.md). Each
 * row is one real server's shape, run against the provider itself with the scripted server: the
 * error is a ModelError (a runtime failure, exit 1), its message holds the server's own text (and
 * the base-URL hint only for a body that is not an API's), and nothing is retried that should
 * not be. One row goes through the CLI: exit 1, stdout empty, agentEnd carries the same message.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { exitCodeForError } from "../../../src/cli/exit-codes.js";
import { errorKindOf } from "../../../src/errors.js";
import { createOpenAIProvider } from "../../../src/provider/openai.js";
import { describeErrorBody, describeNonJson } from "../../../src/provider/server-errors.js";
import { SseParser } from "../../../src/provider/openai-stream.js";
import { ModelError, type ModelRequest, type RetryInfo } from "../../../src/provider/types.js";
import { RawSse, reply, startChatServer, streamChunk, type ChatReply, type ChatServer } from "../../support/chat-server.js";
import { compatProject, type CompatProject } from "../../support/compat-cli.js";

let project: CompatProject;
let server: ChatServer | undefined;
beforeAll(async () => {
  project = await compatProject();
});
afterAll(async () => {
  await project.remove();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const HTML_502 = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n";
const BASE_URL_HINT = "check that the base URL points at an OpenAI-compatible API";

interface ErrorCase {
  name: string;
  reply: ChatReply;
  /** Every text the run's error must contain. */
  expected: string[];
  hint?: boolean;
  stream?: boolean;
}

const cases: ErrorCase[] = [
  {
    name: "vLLM: {object: \"error\", message} (HTTP 400)",
    reply: { kind: "error", status: 400, body: { object: "error", message: "This model's maximum context length is 4096 tokens.", type: "BadRequestError", param: null, code: 400 } },
    expected: ["HTTP 400", "maximum context length is 4096 tokens"],
  },
  {
    name: "a bare {message} body (HTTP 403)",
    reply: { kind: "error", status: 403, body: { message: "Your plan does not include this model" } },
    expected: ["HTTP 403", "Your plan does not include this model"],
  },
  {
    name: "Gemini: a JSON array holding the error (HTTP 400)",
    reply: { kind: "error", status: 400, body: [{ error: { code: 400, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT" } }] },
    expected: ["HTTP 400", "API key not valid"],
  },
  {
    name: "Ollama: {error: \"text\"} (HTTP 404)",
    reply: { kind: "error", status: 404, body: { error: "model \"llama9\" not found, try pulling it first" } },
    expected: ["HTTP 404", "model \"llama9\" not found"],
  },
  {
    name: "TGI: {error, error_type} (HTTP 422)",
    reply: { kind: "error", status: 422, body: { error: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096", error_type: "validation" } },
    expected: ["HTTP 422", "Input validation error"],
  },
  {
    name: "FastAPI validation detail (HTTP 422)",
    reply: { kind: "error", status: 422, body: { detail: [{ type: "missing", loc: ["body", "messages"], msg: "Field required" }] } },
    expected: ["HTTP 422", "Field required (body.messages)"],
  },
  {
    name: "plain text 404 from a wrong path",
    reply: reply.raw(404, "404 page not found\n", "text/plain; charset=utf-8"),
    expected: ["HTTP 404", "404 page not found", BASE_URL_HINT],
    hint: true,
  },
  {
    name: "an nginx HTML page (HTTP 502)",
    reply: reply.raw(502, HTML_502, "text/html"),
    expected: ["HTTP 502", "502 Bad Gateway", "HTML page", BASE_URL_HINT],
    hint: true,
  },
  {
    name: "a 200 JSON body holding {error} (OpenRouter upstream failure), streamed request",
    reply: { kind: "json", body: { error: { message: "Upstream provider timed out", code: 504 } }, validate: false },
    expected: ["the server reported an error", "Upstream provider timed out"],
  },
  {
    name: "a 200 JSON body holding {error}, non-streamed request",
    reply: { kind: "json", body: { error: { message: "No endpoints found for this model", code: 404 } }, validate: false },
    expected: ["the server reported an error", "No endpoints found for this model"],
    stream: false,
  },
  {
    name: "a 200 HTML page (a web UI at the base URL), streamed request",
    reply: reply.raw(200, "<!doctype html><html><head><title>Open WebUI</title></head><body>app</body></html>", "text/html"),
    expected: ["Open WebUI", BASE_URL_HINT],
    hint: true,
  },
  {
    name: "a 200 HTML page, non-streamed request",
    reply: reply.raw(200, "<!doctype html><html><head><title>Open WebUI</title></head><body>app</body></html>", "text/html"),
    expected: ["Open WebUI", BASE_URL_HINT],
    hint: true,
    stream: false,
  },
  {
    name: "a 200 plain-text body with no SSE event at all, streamed request (not retried as a cut stream)",
    reply: reply.raw(200, "Service is starting, try again later", "text/plain"),
    expected: ["the server sent no event stream", "Service is starting", BASE_URL_HINT],
    hint: true,
  },
  {
    name: "a 200 plain-text body, non-streamed request",
    reply: reply.raw(200, "Service is starting, try again later", "text/plain"),
    expected: ["the server sent no JSON completion", "Service is starting", BASE_URL_HINT],
    hint: true,
    stream: false,
  },
  {
    name: "a 200 body labelled JSON that is not JSON, non-streamed request",
    reply: reply.raw(200, "upstream connect error or disconnect/reset before headers", "application/json"),
    expected: ["upstream connect error or disconnect/reset before headers", BASE_URL_HINT],
    hint: true,
    stream: false,
  },
  {
    name: "a 200 body labelled JSON that is not JSON, streamed request",
    reply: reply.raw(200, "upstream connect error or disconnect/reset before headers", "application/json"),
    expected: ["upstream connect error or disconnect/reset before headers", BASE_URL_HINT],
    hint: true,
  },
  {
    name: "an error object inside a 200 stream (data: {error})",
    reply: { kind: "sse", chunks: [streamChunk({ role: "assistant", content: "" }), { error: { message: "Rate limit reached mid-stream", type: "rate_limit" } }], validate: false },
    expected: ["error in the stream", "Rate limit reached mid-stream"],
  },
  {
    name: "llama.cpp's error: line inside a 200 stream",
    reply: { kind: "sse", chunks: [new RawSse('error: {"code":500,"message":"failed to decode the batch","type":"server_error"}\n\n')] },
    expected: ["error in the stream", "failed to decode the batch"],
  },
  {
    name: "an event: error inside a 200 stream",
    reply: { kind: "sse", chunks: [streamChunk({ role: "assistant", content: "" }), new RawSse('event: error\ndata: {"error":{"message":"context overflow","code":400}}\n\n')] },
    expected: ["error in the stream", "context overflow"],
  },
];

/** An error status is read the same way whether the request streamed or not: those cases run in both modes. */
const withBothModes = cases.flatMap((c): ErrorCase[] => {
  const status = c.reply.kind === "error" || (c.reply.kind === "raw" && c.reply.status >= 400);
  if (!status || c.stream !== undefined) return [c];
  return [{ ...c, name: `${c.name}, streamed request` }, { ...c, name: `${c.name}, non-streamed request`, stream: false }];
});

/** The provider as the CLI builds it from the compat project's spec (no retries, 5 s per attempt). */
function providerFor(s: ChatServer, options: { stream?: boolean; maxRetries?: number } = {}) {
  return createOpenAIProvider({ model: "test-model", baseURL: s.url, apiKey: "sk-compat-test", apiKeyEnv: "TEST_API_KEY", maxRetries: 0, timeoutMs: 5000, ...options });
}

function request(retries: RetryInfo[] = []): ModelRequest {
  return { messages: [{ role: "user", content: "go" }], tools: [], signal: new AbortController().signal, onRetry: (info) => retries.push(info) };
}

/** What the provider threw for one reply (it must throw a ModelError). */
async function modelError(c: Pick<ErrorCase, "reply" | "stream">): Promise<ModelError> {
  server = await startChatServer([c.reply]);
  const error = await providerFor(server, { stream: c.stream !== false }).complete(request()).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

describe("server error bodies at the provider: a runtime error with the server's own message", () => {
  for (const c of withBothModes) {
    it(c.name, async () => {
      const error = await modelError(c);
      expect(errorKindOf(error)).toBe("runtime");
      expect(exitCodeForError(error)).toBe(1);
      for (const text of c.expected) expect(error.message).toContain(text);
      if (!c.hint) expect(error.message).not.toContain(BASE_URL_HINT);
      expect(server!.requests).toHaveLength(1);
      expect(server!.requests[0].stream === true).toBe(c.stream !== false);
      server!.assertClean();
    });
  }

  it("a 200 JSON body holding {error} with a retryable code (503) is retried, and the retry answers", async () => {
    server = await startChatServer([
      { kind: "json", body: { error: { message: "Upstream overloaded", code: 503 } }, validate: false },
      reply.json({ content: "second try" }),
    ]);
    const retries: RetryInfo[] = [];
    const response = await providerFor(server, { stream: false, maxRetries: 1 }).complete(request(retries));
    expect(response.message.content).toBe("second try");
    expect(retries).toHaveLength(1);
    expect(retries[0].message).toContain("Upstream overloaded");
    expect(server.requests).toHaveLength(2);
    server.assertClean();
  });
});

describe("a server error body through the CLI", () => {
  it("exit 1, stdout empty, and agentEnd's error is the provider's message", async () => {
    const row = withBothModes[0];
    server = await startChatServer([row.reply, row.reply]);
    const expected = await providerFor(server).complete(request()).then(() => "", (e: unknown) => (e as Error).message);
    const r = await project.run(server);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.end).toMatchObject({ type: "agentEnd", stopReason: "error", error: expected });
    for (const text of row.expected) expect(r.end.error).toContain(text);
    expect(server.requests).toHaveLength(2);
    server.assertClean();
  });

  it("a retried 200 {error} body: the retry event carries the server's text, the answer is printed, exit 0", async () => {
    const retrying = await compatProject({ stream: false, maxRetries: 1 });
    try {
      server = await startChatServer([
        { kind: "json", body: { error: { message: "Upstream overloaded", code: 503 } }, validate: false },
        reply.json({ content: "second try" }),
      ]);
      const r = await retrying.run(server);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("second try\n");
      const retry = r.events.find((e) => e.type === "retry") as Record<string, unknown>;
      expect(String(retry.message)).toContain("Upstream overloaded");
      expect(server.requests).toHaveLength(2);
      server.assertClean();
    } finally {
      await retrying.remove();
    }
  });
});

describe("describeErrorBody", () => {
  it("reads every JSON shape and keeps non-JSON text, with the hint only for non-JSON", () => {
    expect(describeErrorBody('{"error":{"message":"m1"}}')).toEqual({ detail: "m1" });
    expect(describeErrorBody('{"object":"error","message":{"detail":[{"msg":"Extra inputs are not permitted","loc":["body","x"]}]}}')).toEqual({
      detail: "Extra inputs are not permitted (body.x)",
    });
    expect(describeErrorBody("[]")).toEqual({ detail: "[]" });
    expect(describeErrorBody('{"weird":true}')).toEqual({ detail: '{"weird":true}' });
    expect(describeErrorBody("   ")).toEqual({ detail: "(empty response body)" });
    const html = describeErrorBody("<html><body><script>var a = 1;</script><h1>Not &amp; found</h1></body></html>");
    expect(html.detail).toBe("Not & found");
    expect(html.hint).toContain("HTML");
    expect(describeErrorBody("x".repeat(5000)).detail.length).toBeLessThanOrEqual(601);
    expect(describeNonJson("")).toMatchObject({ detail: "(empty response body)", hint: expect.stringContaining(BASE_URL_HINT) });
  });

  it("the SSE reader reports error: lines and event: error events as error events", () => {
    const seen: Array<[string, string]> = [];
    const parser = new SseParser((data, event) => seen.push([event, data]));
    parser.push('error: {"message":"a"}\n\nevent: error\ndata: boom\n\nevent: ping\ndata: {}\n\n');
    parser.end();
    expect(seen).toEqual([["error", '{"message":"a"}'], ["error", "boom"], ["ping", "{}"]]);
  });
});
