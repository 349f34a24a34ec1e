/**
 * `model.streamUsage: auto|true|false`. Mistral answers 422 to stream_options;
 * in auto mode that 422 (or a 400 naming stream_options) is answered by one resend without it,
 * and the run stops sending it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIProvider } from "../../../src/provider/openai.js";
import { ModelError, type RetryInfo } from "../../../src/provider/types.js";
import { reply, startChatServer, type ChatServer } from "../../support/chat-server.js";
import { profiles } from "../../support/server-profiles.js";
import { compatProject } from "../../support/compat-cli.js";

let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const shout = { id: "a1b2c3d4e", name: "shout", arguments: '{"text":"hi"}' };

async function withProject<T>(model: Record<string, unknown>, body: (p: Awaited<ReturnType<typeof compatProject>>) => Promise<T>): Promise<T> {
  const p = await compatProject(model);
  try {
    return await body(p);
  } finally {
    await p.remove();
  }
}

describe("Mistral and stream_options", () => {
  it("auto (default): the 422 is answered by one resend without stream_options, kept for the rest of the run; exit 0", async () => {
    server = await startChatServer([reply.stream({ toolCalls: [shout] }), reply.stream({ content: "HI." })], { profile: profiles.mistral() });
    const r = await withProject({}, (p) => p.run(server!));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("HI.\n");
    expect(server.requests).toHaveLength(3);
    expect(server.requests[0].stream_options).toEqual({ include_usage: true });
    expect(server.requests[1].stream_options).toBeUndefined();
    expect(server.requests[2].stream_options).toBeUndefined();
    expect(server.refusals).toEqual(["request 1: unknown field stream_options"]);
    const retry = r.events.find((e) => e.type === "retry") as Record<string, unknown>;
    expect(retry).toMatchObject({ attempt: 1, delayMs: 0, status: 422 });
    expect(String(retry.message)).toMatch(/stream_options.*sending the request again without stream_options/);
    server.assertClean({ refusals: 1 });
  });

  it("false: never sent; Mistral accepts every request; exit 0", async () => {
    server = await startChatServer([reply.stream({ toolCalls: [shout] }), reply.stream({ content: "HI." })], { profile: profiles.mistral() });
    const r = await withProject({ streamUsage: false }, (p) => p.run(server!));
    expect(r.code).toBe(0);
    expect(server.requests.map((b: Record<string, unknown>) => "stream_options" in b)).toEqual([false, false]);
    server.assertClean();
  });

  it("true: always sent, so Mistral's 422 ends the run: exit 1 with Mistral's own message", async () => {
    server = await startChatServer([reply.stream({ content: "never" })], { profile: profiles.mistral() });
    const r = await withProject({ streamUsage: true }, (p) => p.run(server!));
    expect(r.code).toBe(1);
    expect(r.end).toMatchObject({ type: "agentEnd", stopReason: "error" });
    expect(r.end.error).toContain("HTTP 422");
    expect(r.end.error).toContain("Extra inputs are not permitted");
    expect(r.end.error).toContain("stream_options");
    expect(server.requests).toHaveLength(1);
    server.assertClean({ refusals: 1 });
  });

  it("non-streaming requests never carry stream_options", async () => {
    server = await startChatServer([reply.json({ content: "plain" })], { profile: profiles.mistral() });
    const r = await withProject({ stream: false, streamUsage: true }, (p) => p.run(server!));
    expect(r.code).toBe(0);
    expect("stream_options" in server.requests[0]).toBe(false);
    server.assertClean();
  });
});

describe("auto mode with other refusals", () => {
  it("a 400 naming stream_options (OpenAI-style body) also drops it, once", async () => {
    let calls = 0;
    server = await startChatServer((request) => {
      calls++;
      if (request.body.stream_options) return reply.error(400, "Unrecognized request argument supplied: stream_options");
      return reply.stream({ content: "ok" });
    });
    const provider = createOpenAIProvider({ model: "m", baseURL: server.url, apiKey: "k-123456", maxRetries: 0 });
    const retries: RetryInfo[] = [];
    const response = await provider.complete({ messages: [{ role: "user", content: "x" }], tools: [], signal: new AbortController().signal, onRetry: (i) => retries.push(i) });
    expect(response.message.content).toBe("ok");
    expect(calls).toBe(2);
    expect(retries).toHaveLength(1);
    server.assertClean();
  });

  it("a 400 that does not name stream_options is not resent", async () => {
    server = await startChatServer([reply.error(400, "model does not support tools"), reply.stream({ content: "never" })]);
    const provider = createOpenAIProvider({ model: "m", baseURL: server.url, apiKey: "k-123456", maxRetries: 2 });
    const error = await provider.complete({ messages: [{ role: "user", content: "x" }], tools: [], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).status).toBe(400);
    expect(server.requests).toHaveLength(1);
  });

  it("a server that refuses the request even without stream_options: one resend, then the real error", async () => {
    server = await startChatServer(() => reply.error(422, "stream_options and everything else are bad"));
    const provider = createOpenAIProvider({ model: "m", baseURL: server.url, apiKey: "k-123456", maxRetries: 2 });
    const error = (await provider.complete({ messages: [{ role: "user", content: "x" }], tools: [], signal: new AbortController().signal }).catch((e: unknown) => e)) as ModelError;
    expect(error.status).toBe(422);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1].stream_options).toBeUndefined();
  });
});
