/**
 * Issue 12 item 6: `model.maxTokensField`. OpenAI's reasoning models refuse `max_tokens`;
 * Mistral refuses `max_completion_tokens`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { buildRequestBody } from "../src/provider/wire.js";
import { reply, startChatServer, type ChatServer } from "./helpers/chat-server.js";
import { profiles } from "./helpers/server-profiles.js";
import { compatProject } from "./helpers/compat-cli.js";
import { runCli } from "./helpers/cli.js";

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

  it("the default max_tokens is refused: exit 1 with OpenAI's message", async () => {
    const r = await run({}, profiles.openaiReasoning());
    expect(r.code).toBe(1);
    expect(r.end.error).toContain("HTTP 400");
    expect(r.end.error).toContain("Use 'max_completion_tokens' instead");
    server!.assertClean({ refusals: 1 });
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
