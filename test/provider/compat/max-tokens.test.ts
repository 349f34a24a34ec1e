/**
 * `model.maxTokensField`. OpenAI's reasoning models refuse `max_tokens`;
 * Mistral refuses `max_completion_tokens`. OpenAI's refusal of `max_tokens` is
 * answered by one resend with `max_completion_tokens`, so the default spec works with them.
 */
import { afterEach, describe, expect, it } from "vitest";
import { buildRequestBody } from "../../../src/provider/wire.js";
import { refusesMaxTokens } from "../../../src/provider/resend.js";
import { reply, startChatServer, type ChatServer } from "../../support/chat-server.js";
import { profiles } from "../../support/server-profiles.js";
import { compatProject } from "../../support/compat-cli.js";
import { runCliInProcess as runCli } from "../../support/cli-in-process.js";

let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function run(model: Record<string, unknown>, profile: ReturnType<typeof profiles.mistral>, stream = true) {
  server = await startChatServer([stream ? reply.stream({ content: "short" }) : reply.json({ content: "short" })], { profile });
  const p = await compatProject({ maxTokens: 64, streamUsage: false, stream, ...model });
  try {
    return await p.run(server);
  } finally {
    await p.remove();
  }
}

describe("OpenAI reasoning models", () => {
  it("maxTokensField: max_completion_tokens is accepted (streamed); exit 0", async () => {
    const r = await run({ maxTokensField: "max_completion_tokens" }, profiles.openaiReasoning());
    expect(r.code).toBe(0);
    expect(server!.requests[0].max_completion_tokens).toBe(64);
    expect("max_tokens" in server!.requests[0]).toBe(false);
    server!.assertClean();
  });

  it("maxTokensField: max_completion_tokens is accepted (non-streamed); exit 0", async () => {
    const r = await run({ maxTokensField: "max_completion_tokens" }, profiles.openaiReasoning(), false);
    expect(r.code).toBe(0);
    expect(server!.requests[0].max_completion_tokens).toBe(64);
    server!.assertClean();
  });

  for (const stream of [true, false]) {
    it(`the default max_tokens is refused (${stream ? "streamed" : "non-streamed"}): sent once more with max_completion_tokens; exit 0`, async () => {
      const r = await run({}, profiles.openaiReasoning(), stream);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe("short\n");
      expect(server!.requests.map((b) => [b.max_tokens, b.max_completion_tokens])).toEqual([[64, undefined], [undefined, 64]]);
      const retries = r.events.filter((e) => e.type === "retry");
      expect(retries).toEqual([expect.objectContaining({ attempt: 1, delayMs: 0, status: 400 })]);
      expect(retries[0].message).toContain("Use 'max_completion_tokens' instead");
      expect(retries[0].message).toContain("(sending the request again with max_completion_tokens instead of max_tokens)");
      server!.assertClean({ refusals: 1 });
    });
  }

  it("the resend is not a retry (maxRetries 0), and later turns of the run send max_completion_tokens at once", async () => {
    server = await startChatServer([reply.stream({ toolCalls: [{ name: "shout", arguments: '{"text":"a"}' }] }), reply.stream({ content: "A" })], { profile: profiles.openaiReasoning() });
    const p = await compatProject({ maxTokens: 64, maxRetries: 0 });
    try {
      const r = await p.run(server);
      expect(r.code, r.stderr).toBe(0);
      expect(server.requests.map((b) => "max_tokens" in b)).toEqual([true, false, false]);
      expect(server.requests[2].max_completion_tokens).toBe(64);
      server.assertClean({ refusals: 1 });
    } finally {
      await p.remove();
    }
  });

  it("refusesMaxTokens: an unsupported max_tokens that names max_completion_tokens, nothing else", () => {
    expect(refusesMaxTokens(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.")).toBe(true);
    expect(refusesMaxTokens(400, "max_tokens is too large: 100000. This model supports at most 4096 completion tokens")).toBe(false);
    expect(refusesMaxTokens(400, "Unsupported parameter: 'max_tokens'")).toBe(false);
    expect(refusesMaxTokens(500, "Unsupported parameter: 'max_tokens' ... Use 'max_completion_tokens' instead.")).toBe(false);
  });
});

describe("Mistral", () => {
  it("the default max_tokens is accepted; exit 0", async () => {
    const r = await run({}, profiles.mistral());
    expect(r.code).toBe(0);
    expect(server!.requests[0].max_tokens).toBe(64);
    server!.assertClean();
  });

  it("max_completion_tokens is refused with a 422: exit 1 naming the field", async () => {
    const r = await run({ maxTokensField: "max_completion_tokens" }, profiles.mistral());
    expect(r.code).toBe(1);
    expect(r.end.error).toContain("HTTP 422");
    expect(r.end.error).toContain("Extra inputs are not permitted (body.max_completion_tokens)");
    server!.assertClean({ refusals: 1 });
  });
});

describe("the spec key", () => {
  it("an unknown maxTokensField value is a spec error (exit 2) naming the key and the allowed values", async () => {
    const p = await compatProject({ maxTokensField: "max_output_tokens" });
    try {
      const r = await runCli(["run", "go"], { cwd: p.dir, env: { TEST_BASE_URL: "http://127.0.0.1:9/v1", TEST_API_KEY: "k" } });
      expect(r.code).toBe(2);
      expect(r.events.at(-1)?.error).toMatch(/"model\.maxTokensField" must be one of max_tokens, max_completion_tokens/);
    } finally {
      await p.remove();
    }
  });

  it("buildRequestBody puts the limit in the chosen field only", () => {
    const body = buildRequestBody({ model: "m", stream: false, maxTokens: 9, maxTokensField: "max_completion_tokens" }, [], []);
    expect(body).toEqual({ model: "m", messages: [], max_completion_tokens: 9 });
    expect(buildRequestBody({ model: "m", stream: false, maxTokens: 9 }, [], [])).toEqual({ model: "m", messages: [], max_tokens: 9 });
  });
});
