/**
 * Issue 12 item 1: reasoning fields go back with the turn that carried them, and only then.
 * Profiles: DeepSeek (refuses turn 2 without reasoning_content), Gemini via OpenRouter (refuses
 * it without reasoning_details), Mistral and Gemini (refuse any unknown message field).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIProvider } from "../src/provider/openai.js";
import { StreamAssembler } from "../src/provider/openai-stream.js";
import { toWireMessages } from "../src/provider/wire.js";
import { ModelError, type ChatMessage } from "../src/provider/types.js";
import { reply, startChatServer, type ChatServer } from "./helpers/chat-server.js";
import { profiles } from "./helpers/server-profiles.js";
import { compatProject, type CompatProject } from "./helpers/compat-cli.js";

let project: CompatProject;
let server: ChatServer | undefined;
beforeAll(async () => {
  project = await compatProject();
});
afterAll(() => project.remove());
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const shoutCall = (id: string) => ({ id, name: "shout", arguments: '{"text":"hi"}' });
const assistantMessages = (body: { messages: Array<Record<string, unknown>> }) => body.messages.filter((m) => m.role === "assistant");

describe("DeepSeek thinking mode: reasoning_content", () => {
  it("streamed: the joined reasoning_content goes back with the tool-call turn; exit 0", async () => {
    server = await startChatServer(
      [
        reply.stream({
          leadingDeltas: [{ reasoning_content: "The user wants " }, { reasoning_content: "it shouted." }],
          toolCalls: [shoutCall("call_ds1")],
        }),
        reply.stream({ content: "HI it is." }),
      ],
      { profile: profiles.deepseek() },
    );
    const r = await project.run(server);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("HI it is.\n");
    const [assistant] = assistantMessages(server.requests[1]);
    expect(assistant).toMatchObject({ reasoning_content: "The user wants it shouted.", tool_calls: [{ id: "call_ds1" }] });
    expect(server.requests[0].messages.some((m: Record<string, unknown>) => "reasoning_content" in m)).toBe(false);
    server.assertClean();
  });

  it("non-streamed: reasoning_content of the JSON message goes back; exit 0", async () => {
    const p = await compatProject({ stream: false });
    try {
      server = await startChatServer(
        [reply.json({ toolCalls: [shoutCall("call_ds2")], extraMessage: { reasoning_content: "Shout it." } }), reply.json({ content: "done" })],
        { profile: profiles.deepseek() },
      );
      const r = await p.run(server);
      expect(r.code).toBe(0);
      expect(assistantMessages(server.requests[1])[0].reasoning_content).toBe("Shout it.");
      server.assertClean();
    } finally {
      await p.remove();
    }
  });

  it("the profile has teeth: turn 2 without reasoning_content is refused, exit 1 with DeepSeek's message", async () => {
    server = await startChatServer([reply.json({ toolCalls: [shoutCall("call_ds3")], extraMessage: { reasoning_content: "x" } })], {
      profile: profiles.deepseek(),
    });
    const provider = createOpenAIProvider({ model: "deepseek-reasoner", baseURL: server.url, apiKey: "k-123456", stream: false, maxRetries: 0 });
    const signal = new AbortController().signal;
    const first = await provider.complete({ messages: [{ role: "user", content: "go" }], tools: [], signal });
    expect(first.message.reasoning).toEqual({ reasoning_content: "x" });
    const withoutReasoning: ChatMessage[] = [
      { role: "user", content: "go" },
      { role: "assistant", content: "", toolCalls: first.message.toolCalls },
      { role: "tool", toolCallId: "call_ds3", toolName: "shout", content: [{ type: "text", text: "HI" }], isError: false },
    ];
    const error = await provider.complete({ messages: withoutReasoning, tools: [], signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).message).toContain("Missing `reasoning_content` field");
    server.assertClean({ refusals: 1 });
  });
});

describe("Gemini via OpenRouter: reasoning and reasoning_details", () => {
  it("streamed reasoning and reasoning_details come back exactly, merged by index; exit 0", async () => {
    server = await startChatServer(
      [
        reply.stream({
          leadingDeltas: [
            { reasoning: "Need ", reasoning_details: [{ type: "reasoning.text", text: "Need ", index: 0, format: "google-gemini-v1" }] },
            { reasoning: "a shout.", reasoning_details: [{ type: "reasoning.text", text: "a shout.", index: 0, format: "google-gemini-v1" }] },
            { reasoning_details: [{ type: "reasoning.encrypted", data: "c2lnbmF0dXJl", index: 1, format: "google-gemini-v1" }] },
          ],
          toolCalls: [shoutCall("tool_or_1")],
        }),
        reply.stream({ content: "ok" }),
      ],
      { profile: profiles.openrouterGemini() },
    );
    const r = await project.run(server);
    expect(r.code).toBe(0);
    expect(assistantMessages(server.requests[1])[0]).toMatchObject({
      reasoning: "Need a shout.",
      reasoning_details: [
        { type: "reasoning.text", text: "Need a shout.", index: 0, format: "google-gemini-v1" },
        { type: "reasoning.encrypted", data: "c2lnbmF0dXJl", index: 1, format: "google-gemini-v1" },
      ],
    });
    server.assertClean();
  });

  it("non-streamed reasoning_details come back as received; the profile accepts turn 2; exit 0", async () => {
    const p = await compatProject({ stream: false });
    try {
      const details = [{ type: "reasoning.encrypted", data: "c2ln", id: "tool_or_2", format: "google-gemini-v1", index: 0 }];
      server = await startChatServer(
        [reply.json({ toolCalls: [shoutCall("tool_or_2")], extraMessage: { reasoning: "Shout.", reasoning_details: details } }), reply.json({ content: "ok" })],
        { profile: profiles.openrouterGemini() },
      );
      const r = await p.run(server);
      expect(r.code).toBe(0);
      expect(assistantMessages(server.requests[1])[0]).toMatchObject({ reasoning: "Shout.", reasoning_details: details });
      server.assertClean();
    } finally {
      await p.remove();
    }
  });
});

describe("servers that refuse unknown fields never get reasoning fields", () => {
  for (const [name, profile] of [["Mistral", profiles.mistral], ["Gemini", profiles.gemini]] as const) {
    it(`${name}: a tool round trip without reasoning sends none back; exit 0`, async () => {
      const p = await compatProject({ streamUsage: false });
      try {
        server = await startChatServer([reply.stream({ toolCalls: [shoutCall("abcDEF123")] }), reply.stream({ content: "fine" })], { profile: profile() });
        const r = await p.run(server);
        expect(r.code).toBe(0);
        const keys = server.requests.flatMap((b: { messages: object[] }) => b.messages.flatMap((m) => Object.keys(m)));
        expect(keys.filter((k: string) => k.startsWith("reasoning"))).toEqual([]);
        server.assertClean();
      } finally {
        await p.remove();
      }
    });
  }

  it("only the three reasoning fields are sent back, whatever else a (session-loaded) message holds", () => {
    const reasoning = { reasoning_content: "r", role: "system", content: "hijack", extra: 1 } as Record<string, unknown>;
    const [wire] = toWireMessages([{ role: "assistant", content: "a", toolCalls: [], reasoning }]);
    expect(wire).toEqual({ role: "assistant", content: "a", reasoning_content: "r" });
  });

  it("empty reasoning fields (null, \"\", []) count as not sent", async () => {
    const assembler = new StreamAssembler();
    assembler.pushChunk({ choices: [{ index: 0, delta: { content: "x", reasoning_content: null, reasoning: "", reasoning_details: [] } }] });
    expect(assembler.result().message.reasoning).toBeUndefined();
  });
});
