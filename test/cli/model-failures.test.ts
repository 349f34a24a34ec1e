/**
 * A rejected key says so, and a server error that only repeats itself is not
 * retried to the end of the budget.
 * - A 401 or 403 names the variable the key came from ("the server at URL rejected the key in
 *   $VAR") and is never retried, even when the server says `x-should-retry: true`.
 * - An HTTP 500 whose message is the same on the retry (llama.cpp's request errors, e.g. "tools
 *   param requires --jinja flag") stops after that second answer, saying so. A 500 whose message
 *   changes, or that comes with `retry-after`, keeps the whole retry budget, as do 502/503/429.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIProvider } from "../../src/provider/openai.js";
import { repeatsItself } from "../../src/provider/retry.js";
import { ModelError, type RetryInfo } from "../../src/provider/types.js";
import { exitCodeForError } from "../../src/cli/exit-codes.js";
import { reply, startChatServer, type ChatReply, type ChatServer } from "../support/chat-server.js";
import { llamaCppError } from "../support/server-profiles.js";
import { compatProject, type CompatProject } from "../support/compat-cli.js";
import { assertEventStream } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

let project: CompatProject;
let server: ChatServer | undefined;
beforeAll(async () => {
  project = await compatProject({ maxRetries: 3 });
});
afterAll(() => project.remove());
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const KEY = "sk-compat-test";
const retries = (events: Array<Record<string, unknown>>) => events.filter((e) => e.type === "retry");

describe("a rejected key (through the CLI)", () => {
  for (const status of [401, 403]) {
    it(`HTTP ${status}, even with x-should-retry: true: one request, the variable named, the key never shown; exit 1`, async () => {
      const rejection: ChatReply = { kind: "error", status, body: { error: { message: "Incorrect API key provided: sk-comp***test.", type: "invalid_request_error", code: "invalid_api_key" } }, headers: { "x-should-retry": "true" } };
      server = await startChatServer([rejection, rejection, rejection, rejection]);
      const r = await project.run(server);
      expect(r.code).toBe(1);
      expect(server.requests).toHaveLength(1);
      expect(retries(r.events)).toEqual([]);
      expect(r.end.error).toContain(`the server at ${server.url} rejected the key in $TEST_API_KEY: HTTP ${status}: Incorrect API key provided`);
      expect(r.stderr).not.toContain(KEY);
      expect(server.received[0].headers.authorization).toBe(`Bearer ${KEY}`);
      server.assertClean();
    });
  }

  it("the default variable: $OPENAI_API_KEY is named", async () => {
    server = await startChatServer([reply.error(401, "invalid key")]);
    const p = await compatProject({ apiKeyEnv: undefined });
    try {
      const r = await runCli(["run", "go"], { cwd: p.dir, env: { TEST_BASE_URL: server.url, OPENAI_API_KEY: "sk-default-var" } });
      assertEventStream(r.events);
      expect(r.code).toBe(1);
      expect(r.events.at(-1)!.error).toContain(`rejected the key in $OPENAI_API_KEY: HTTP 401: invalid key`);
      expect(r.stderr).not.toContain("sk-default-var");
    } finally {
      await p.remove();
    }
  });

  it("no key set at all: a 401 says which variable to set; exit 1", async () => {
    server = await startChatServer([reply.error(401, "missing bearer token")]);
    const p = await compatProject();
    try {
      const r = await runCli(["run", "go"], { cwd: p.dir, env: { TEST_BASE_URL: server.url } });
      expect(r.code).toBe(1);
      expect(r.events.at(-1)!.error).toContain("HTTP 401: missing bearer token (no API key is set: set TEST_API_KEY)");
    } finally {
      await p.remove();
    }
  });
});

/** A provider as the compat project's spec makes it (maxRetries 3 unless given), and its retries. */
async function complete(s: ChatServer, maxRetries = 3) {
  const seen: RetryInfo[] = [];
  const provider = createOpenAIProvider({ model: "test-model", baseURL: s.url, apiKey: KEY, apiKeyEnv: "TEST_API_KEY", maxRetries, timeoutMs: 5000 });
  const outcome = await provider.complete({ messages: [{ role: "user", content: "go" }], tools: [], signal: new AbortController().signal, onRetry: (info) => seen.push(info) }).then(
    (response) => ({ response, error: undefined }),
    (error: unknown) => ({ response: undefined, error }),
  );
  return { ...outcome, retries: seen };
}

describe("a server error that repeats itself (at the provider)", () => {
  it("llama.cpp's 500 'tools param requires --jinja flag' twice: stops after the second answer, saying so", async () => {
    const jinja = llamaCppError("tools param requires --jinja flag");
    server = await startChatServer([jinja, jinja, jinja, jinja]);
    const { error, retries } = await complete(server);
    expect(error).toBeInstanceOf(ModelError);
    expect(exitCodeForError(error)).toBe(1);
    expect(server.requests).toHaveLength(2);
    expect(retries).toHaveLength(1);
    expect((error as Error).message).toContain("HTTP 500: tools param requires --jinja flag (after 2 attempts); the server gave the same answer to the retry, so it is not retried again");
    server.assertClean();
  });

  it("a 500 whose message changes keeps the whole budget (maxRetries 3: 4 requests), then the answer comes", async () => {
    server = await startChatServer([reply.error(500, "overloaded (req_1)"), reply.error(500, "overloaded (req_2)"), reply.error(500, "overloaded (req_3)"), reply.stream({ content: "ok" })]);
    const { response, error, retries } = await complete(server);
    expect(error).toBeUndefined();
    expect(response!.message.content).toBe("ok");
    expect(server.requests).toHaveLength(4);
    expect(retries).toHaveLength(3);
  });

  it("the same 500 with retry-after, and the same 503, are retried to the end of the budget", async () => {
    const later = reply.error(500, "busy", { "retry-after-ms": "5" });
    const unavailable = reply.error(503, "Service Unavailable", { "retry-after-ms": "5" });
    server = await startChatServer([later, later, unavailable, unavailable, reply.stream({ content: "ok" })]);
    const { response, error, retries } = await complete(server, 4);
    expect(error).toBeUndefined();
    expect(response!.message.content).toBe("ok");
    expect(server.requests).toHaveLength(5);
    expect(retries).toHaveLength(4);
  });
});

describe("a server error that repeats itself (through the CLI)", () => {
  it("the repeated 500 ends the run: one retry event, the provider's message in agentEnd, exit 1", async () => {
    const jinja = llamaCppError("tools param requires --jinja flag");
    server = await startChatServer([jinja, jinja, jinja, jinja]);
    const r = await project.run(server);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(server.requests).toHaveLength(2);
    expect(retries(r.events)).toHaveLength(1);
    expect(r.end.error).toContain("(after 2 attempts); the server gave the same answer to the retry, so it is not retried again");
    server.assertClean();
  });
});

describe("provider rules", () => {
  it("a key given as an option without its variable's name is named as the apiKey option", async () => {
    server = await startChatServer([reply.error(403, "no access to model")]);
    const provider = createOpenAIProvider({ model: "m", baseURL: server.url, apiKey: "sk-option-key", maxRetries: 2 });
    const error = await provider.complete({ messages: [{ role: "user", content: "hi" }], tools: [], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).status).toBe(403);
    expect((error as Error).message).toBe(`Model request to m at ${server.url} failed: the server at ${server.url} rejected the key in the apiKey option: HTTP 403: no access to model`);
    expect(server.requests).toHaveLength(1);
  });

  it("repeatsItself: only a 500 with the previous message and no sign that waiting helps", () => {
    const none = new Headers();
    expect(repeatsItself(500, none, "HTTP 500: x", "HTTP 500: x")).toBe(true);
    expect(repeatsItself(500, none, "HTTP 500: x", undefined)).toBe(false);
    expect(repeatsItself(500, none, "HTTP 500: x", "HTTP 500: y")).toBe(false);
    expect(repeatsItself(503, none, "HTTP 503: x", "HTTP 503: x")).toBe(false);
    expect(repeatsItself(null, undefined, "connection failed", "connection failed")).toBe(false);
    expect(repeatsItself(500, new Headers({ "retry-after": "1" }), "HTTP 500: x", "HTTP 500: x")).toBe(false);
    expect(repeatsItself(500, new Headers({ "x-should-retry": "true" }), "HTTP 500: x", "HTTP 500: x")).toBe(false);
  });
});
