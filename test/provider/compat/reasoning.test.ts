/**
 * Reasoning fields go back with the turn that carried them, and only then.
 * Profiles: DeepSeek (refuses turn 2 without reasoning_content), Gemini via OpenRouter (refuses
 * it without reasoning_details), Mistral and Gemini (refuse any unknown message field).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIProvider } from "../../../src/provider/openai.js";
import { StreamAssembler } from "../../../src/provider/openai-stream.js";
import { toWireMessages } from "../../../src/provider/wire.js";
import { reasoningFor, reasoningOrigin } from "../../../src/provider/reasoning.js";
import { refusesField } from "../../../src/provider/server-errors.js";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ModelError, type ChatMessage } from "../../../src/provider/types.js";
import { reply, startChatServer, type ChatServer } from "../../support/chat-server.js";
import { profiles } from "../../support/server-profiles.js";
import { compatProject, type CompatProject } from "../../support/compat-cli.js";

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
    expect(first.message.reasoning).toEqual({ reasoning_content: "x", from: `deepseek-reasoner at ${server.url}` });
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
  for (const [name, profile, stream] of [["Mistral", profiles.mistral, true], ["Gemini", profiles.gemini, true], ["Mistral", profiles.mistral, false], ["Gemini", profiles.gemini, false]] as const) {
    it(`${name}, ${stream ? "streamed" : "non-streamed"}: a tool round trip without reasoning sends none back; exit 0`, async () => {
      const p = await compatProject({ streamUsage: false, stream });
      const turn = stream ? reply.stream : reply.json;
      try {
        server = await startChatServer([turn({ toolCalls: [shoutCall("abcDEF123")] }), turn({ content: "fine" })], { profile: profile() });
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

describe("reasoning across runs: --session, --record and replay", () => {
  const reasoningKeys = (body: { messages: object[] }) => body.messages.flatMap((m) => Object.keys(m)).filter((k) => k.startsWith("reasoning"));

  it("--session: the same DeepSeek server gets its reasoning_content back in the next run; a Mistral server never gets it; exit 0 each", async () => {
    const mistralProject = await compatProject({ streamUsage: false });
    const other = await startChatServer([reply.stream({ content: "third" })], { profile: profiles.mistral() });
    try {
      server = await startChatServer(
        [
          reply.stream({ leadingDeltas: [{ reasoning_content: "Run one thinks." }], toolCalls: [shoutCall("run1call1")] }),
          reply.stream({ content: "first" }),
          reply.stream({ leadingDeltas: [{ reasoning_content: "Run two thinks." }], toolCalls: [shoutCall("run2call1")] }),
          reply.stream({ content: "second" }),
        ],
        { profile: profiles.deepseek() },
      );
      const session = join(project.dir, "deepseek-session.json");
      const one = await project.run(server, "go", ["--session", session]);
      expect(one.code).toBe(0);
      const saved = JSON.parse(await readFile(session, "utf8"));
      const savedAssistant = saved.messages.find((m: { role: string; toolCalls?: unknown[] }) => m.role === "assistant" && m.toolCalls?.length);
      expect(savedAssistant.reasoning).toEqual({ reasoning_content: "Run one thinks.", from: `test-model at ${server.url}` });

      const two = await project.run(server, "again", ["--session", session]);
      expect(two.code).toBe(0);
      expect(two.stdout).toBe("second\n");
      // Run two's first request carries run one's reasoning back, and the profile checked it.
      expect(assistantMessages(server.requests[2])[0]).toMatchObject({ reasoning_content: "Run one thinks.", tool_calls: [{ id: "run1call1" }] });
      expect(server.requests[2].messages.every((m: Record<string, unknown>) => !("from" in m))).toBe(true);
      server.assertClean();

      const three = await mistralProject.run(other, "elsewhere", ["--session", session]);
      expect([three.code, three.end.error, other.refusals]).toEqual([0, undefined, []]);
      expect(three.stdout).toBe("third\n");
      expect(assistantMessages(other.requests[0])).toHaveLength(4);
      expect(reasoningKeys(other.requests[0])).toEqual([]);
      other.assertClean();
    } finally {
      await other.close();
      await mistralProject.remove();
    }
  });

  it("--record stores no reasoning, so a replay of it (and its --session) never sends any; exit 0", async () => {
    server = await startChatServer(
      [reply.stream({ leadingDeltas: [{ reasoning_content: "secret thoughts" }], toolCalls: [shoutCall("reccall01")] }), reply.stream({ content: "recorded" })],
      { profile: profiles.deepseek() },
    );
    const recording = join(project.dir, "reasoning-record.jsonl");
    const recorded = await project.run(server, "go", ["--record", recording]);
    expect(recorded.code).toBe(0);
    const text = await readFile(recording, "utf8");
    expect(text).not.toContain("reasoning");
    expect(text).not.toContain("secret thoughts");
    server.assertClean();

    const session = join(project.dir, "replay-session.json");
    const replayed = await project.run(server, "go", ["-m", `replay:${recording}`, "--session", session]);
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toBe("recorded\n");
    expect(await readFile(session, "utf8")).not.toContain("reasoning");
    expect(server.requests).toHaveLength(2);
  });

  it("reasoningFor: keeps reasoning for its own origin only, strips it from unknown and other origins without changing the message", () => {
    const own = { reasoning_content: "a", from: "m at http://h/v1" };
    const mine: ChatMessage = { role: "assistant", content: "", toolCalls: [{ id: "1", name: "shout", arguments: "{}" }], reasoning: own };
    const foreign: ChatMessage = { role: "assistant", content: "b", toolCalls: [], reasoning: { reasoning: "b", from: "m at http://other/v1" } };
    const unknown: ChatMessage = { role: "assistant", content: "c", toolCalls: [], reasoning: { reasoning_content: "c" } };
    const user: ChatMessage = { role: "user", content: "u" };
    const clean = [user, mine];
    expect(reasoningFor(clean, "m at http://h/v1")).toBe(clean);
    const all = [user, mine, foreign, unknown];
    const sent = reasoningFor(all, "m at http://h/v1");
    expect(sent[0]).toBe(user);
    expect(sent[1]).toBe(mine);
    expect(sent[2]).toEqual({ role: "assistant", content: "b", toolCalls: [] });
    expect(sent[3]).toEqual({ role: "assistant", content: "c", toolCalls: [] });
    expect(reasoningFor(all, "m at http://h/v1")[2]).toBe(sent[2]);
    expect((foreign as { reasoning?: unknown }).reasoning).toEqual({ reasoning: "b", from: "m at http://other/v1" });
    expect(toWireMessages(sent).flatMap((m) => Object.keys(m)).filter((k) => k.startsWith("reasoning"))).toEqual(["reasoning_content"]);
    expect(reasoningFor([mine], "").map((m) => "reasoning" in m)).toEqual([false]);
    expect(reasoningOrigin("m", "https://user:pw@h.example:8443/v1/?key=k#x")).toBe("m at https://h.example:8443/v1");
    const mixed = reasoningFor([foreign, user, mine, unknown, user], "m at http://h/v1");
    expect(mixed).toHaveLength(5);
    expect(mixed.slice(1, 3)).toEqual([user, mine]);
    expect(mixed.map((m) => "reasoning" in m)).toEqual([false, false, true, false, false]);
  });
});

describe("a server that sends reasoning but refuses it back", () => {
  it("Groq (deepseek-r1-distill): one resend without reasoning fields, none for the rest of the run; exit 0", async () => {
    server = await startChatServer(
      [
        reply.stream({ leadingDeltas: [{ reasoning: "First." }], toolCalls: [shoutCall("gq1")] }),
        reply.stream({ leadingDeltas: [{ reasoning: "Second." }], toolCalls: [shoutCall("gq2")] }),
        reply.stream({ content: "Both shouted." }),
      ],
      { profile: profiles.groqRefusingReasoning() },
    );
    const r = await project.run(server);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Both shouted.\n");
    expect(server.refusals).toEqual(["request 2: unknown message field reasoning"]);
    expect(server.requests).toHaveLength(4);
    expect(assistantMessages(server.requests[1])[0].reasoning).toBe("First.");
    for (const body of server.requests.slice(2)) expect(assistantMessages(body).every((m) => !("reasoning" in m))).toBe(true);
    const retry = r.events.find((e) => e.type === "retry") as Record<string, unknown>;
    expect(retry).toMatchObject({ attempt: 1, delayMs: 0, status: 400 });
    expect(String(retry.message)).toContain("sending the request again without reasoning fields");
    server.assertClean({ refusals: 1 });
  });

  it("refusesField: unsupported, unknown or extra reasoning fields count; a missing one (DeepSeek) or other statuses do not", () => {
    expect(refusesField(400, "'messages.1' : property 'reasoning' is unsupported", "reasoning")).toBe(true);
    expect(refusesField(422, '{"loc":["body","messages",1,"reasoning_content"],"msg":"Extra inputs are not permitted"}', "reasoning")).toBe(true);
    expect(refusesField(400, 'Unknown name "reasoning_details" at \'messages[1]\'', "reasoning")).toBe(true);
    expect(refusesField(400, "Missing `reasoning_content` field in the assistant message at message index 1.", "reasoning")).toBe(false);
    expect(refusesField(500, "property 'reasoning' is unsupported", "reasoning")).toBe(false);
    expect(refusesField(400, "model does not support tools", "reasoning")).toBe(false);
  });
});
