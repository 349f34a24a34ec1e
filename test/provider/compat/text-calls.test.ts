/**
 * Calls written into the answer's text (opt-in
 * `model.textToolCalls`): `<tool_call>` tags (Hermes/Qwen, old Ollama, servers without a tool
 * parser) and the whole-answer `{"tool_call": …}` form; TGI's `tool_calls` as an object; Groq's
 * `x_groq.usage`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseTextToolCalls } from "../../../src/provider/text-tool-calls.js";
import { reply, startChatServer, streamChunk, type ChatReply, type ChatServer } from "../../support/chat-server.js";
import { profiles } from "../../support/server-profiles.js";
import { compatProject, type CompatProject } from "../../support/compat-cli.js";

const projects: Record<string, CompatProject> = {};
let server: ChatServer | undefined;
beforeAll(async () => {
  projects.textStream = await compatProject({ textToolCalls: true });
  projects.textJson = await compatProject({ textToolCalls: true, stream: false });
  projects.plainStream = await compatProject();
  projects.plainJson = await compatProject({ stream: false });
});
afterAll(async () => {
  for (const p of Object.values(projects)) await p.remove();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const HERMES = 'I will shout it.\n<tool_call>\n{"name": "shout", "arguments": {"text": "hi"}}\n</tool_call>';
const TWO_TAGS = '<tool_call>{"name": "shout", "arguments": {"text": "a"}}</tool_call>\n<tool_call>{"name": "count", "arguments": "{\\"text\\": \\"abc\\"}"}</tool_call>';

const JSON_FORM_FENCED = '```json\n{"tool_call": {"name": "count", "arguments": {"text": "four"}}}\n```';

const toolResults = (events: Array<Record<string, any>>) => events.filter((e) => e.type === "toolExecutionEnd").map((e) => [e.toolName, e.result.content[0].text]);

describe("<tool_call> tags (textToolCalls: true)", () => {
  it("streamed (vLLM/Qwen without a tool parser): the tagged call runs, the text around it stays the answer; exit 0", async () => {
    server = await startChatServer([reply.stream({ content: HERMES, textPieceSize: 7 }), reply.stream({ content: "HI." })], { profile: profiles.lenient("vllm-hermes") });
    const r = await projects.textStream.run(server);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("HI.\n");
    expect(toolResults(r.events)).toEqual([["shout", "HI"]]);
    const assistant = server.requests[1].messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant).toMatchObject({ content: "I will shout it.", tool_calls: [{ type: "function", function: { name: "shout", arguments: '{"text":"hi"}' } }] });
    expect(assistant.tool_calls[0].id).not.toBe("");
    server.assertClean();
  });

  it("non-streamed (old Ollama): two tags make two calls; exit 0", async () => {
    server = await startChatServer([reply.json({ content: TWO_TAGS }), reply.json({ content: "done" })], { profile: profiles.lenient("ollama") });
    const r = await projects.textJson.run(server);
    expect(r.code).toBe(0);
    expect(toolResults(r.events)).toEqual([["shout", "A"], ["count", "3"]]);
    const assistant = server.requests[1].messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content).toBeNull();
    expect(assistant.tool_calls).toHaveLength(2);
    expect(new Set(assistant.tool_calls.map((c: { id: string }) => c.id)).size).toBe(2);
    server.assertClean();
  });

  it("the whole-answer JSON {\"tool_call\": …} form runs too; exit 0", async () => {
    server = await startChatServer([reply.stream({ content: '{"tool_call": {"name": "count", "arguments": {"text": "four"}}}' }), reply.stream({ content: "4" })], {
      profile: profiles.lenient("no-tool-parser"),
    });
    const r = await projects.textStream.run(server);
    expect(r.code).toBe(0);
    expect(toolResults(r.events)).toEqual([["count", "4"]]);
    server.assertClean();
  });

  it("the whole-answer JSON form in a fenced block, non-streamed: the call runs and the turn's text is empty; exit 0", async () => {
    server = await startChatServer([reply.json({ content: JSON_FORM_FENCED }), reply.json({ content: "4" })], { profile: profiles.lenient("no-tool-parser") });
    const r = await projects.textJson.run(server);
    expect(r.code).toBe(0);
    expect(toolResults(r.events)).toEqual([["count", "4"]]);
    const assistant = server.requests[1].messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant).toMatchObject({ content: null, tool_calls: [{ function: { name: "count", arguments: '{"text":"four"}' } }] });
    server.assertClean();
  });

  it("off by default: a whole-answer {\"tool_call\": …} is the final answer and nothing runs, streamed or not; exit 0", async () => {
    for (const [p, turn] of [[projects.plainJson, reply.json({ content: JSON_FORM_FENCED })], [projects.plainStream, reply.stream({ content: JSON_FORM_FENCED })]] as const) {
      server = await startChatServer([turn], { profile: profiles.lenient("no-tool-parser") });
      const r = await p.run(server);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${JSON_FORM_FENCED}\n`);
      expect(toolResults(r.events)).toEqual([]);
      expect(r.end).toMatchObject({ stopReason: "completed", toolCalls: 0 });
      server.assertClean();
      await server.close();
      server = undefined;
    }
  });

  it("off by default: the same text is the final answer and nothing runs; exit 0", async () => {
    server = await startChatServer([reply.stream({ content: HERMES })]);
    const r = await projects.plainStream.run(server);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${HERMES}\n`);
    expect(toolResults(r.events)).toEqual([]);
    server.assertClean();
  });

  it("real tool_calls win: tags in the text are left alone when the response has tool_calls", async () => {
    server = await startChatServer([
      reply.stream({ content: HERMES, toolCalls: [{ id: "real", name: "count", arguments: '{"text":"ab"}' }] }),
      reply.stream({ content: "ok" }),
    ]);
    const r = await projects.textStream.run(server);
    expect(r.code).toBe(0);
    expect(toolResults(r.events)).toEqual([["count", "2"]]);
    server.assertClean();
  });
});

describe("parseTextToolCalls", () => {
  it("reads tags, keeps the text around them, and leaves broken tags in the text", () => {
    expect(parseTextToolCalls(HERMES)).toEqual({ content: "I will shout it.", toolCalls: [{ id: "", name: "shout", arguments: '{"text":"hi"}' }] });
    expect(parseTextToolCalls('<tool_call>{"name": "a", "parameters": {"x": 1}}</tool_call> then <tool_call>{not json}</tool_call>')).toEqual({
      content: "then <tool_call>{not json}</tool_call>",
      toolCalls: [{ id: "", name: "a", arguments: '{"x":1}' }],
    });
    expect(parseTextToolCalls('before <tool_call>{"name": "a", "arguments": {}, "id": "given"}')).toEqual({
      content: "before",
      toolCalls: [{ id: "given", name: "a", arguments: "{}" }],
    });
    expect(parseTextToolCalls("<tool_call>{\"arguments\": {}}</tool_call>")).toBeNull();
    expect(parseTextToolCalls("talk about <tool_call> tags")).toBeNull();
    expect(parseTextToolCalls("```json\n{\"tool_call\": {\"function\": {\"name\": \"f\", \"arguments\": \"{}\"}}}\n```")).toEqual({
      content: "",
      toolCalls: [{ id: "", name: "f", arguments: "{}" }],
    });
    expect(parseTextToolCalls("use the tool_call block")).toBeNull();
  });
});

describe("TGI: tool_calls as an object, not a list", () => {
  const tgiChunk = (fn: Record<string, unknown>, finish: string | null = null) =>
    streamChunk({ role: "assistant", tool_calls: { index: 0, id: "", type: "function", function: { description: null, ...fn } } }, finish);

  it("streamed: object deltas (name repeated on every chunk) make one call; exit 0", async () => {
    const turn: ChatReply = {
      kind: "sse",
      validate: false,
      chunks: [tgiChunk({ name: "shout", arguments: '{"text"' }), tgiChunk({ name: "shout", arguments: ':"tgi"}' }), streamChunk({}, "tool_calls")],
    };
    server = await startChatServer([turn, reply.stream({ content: "TGI." })], { profile: profiles.lenient("tgi") });
    const r = await projects.plainStream.run(server);
    expect(r.code).toBe(0);
    expect(toolResults(r.events)).toEqual([["shout", "TGI"]]);
    server.assertClean();
  });

  it("non-streamed: a tool_calls object with object arguments; exit 0", async () => {
    const turn: ChatReply = {
      kind: "json",
      validate: false,
      body: {
        id: "tgi",
        object: "chat.completion",
        created: 1,
        model: "tgi",
        choices: [{ index: 0, finish_reason: "tool_calls", message: { role: "assistant", content: null, tool_calls: { id: "0", type: "function", function: { description: null, name: "count", arguments: { text: "tgi!" } } } } }],
      },
    };
    server = await startChatServer([turn, reply.json({ content: "4" })], { profile: profiles.lenient("tgi") });
    const r = await projects.plainJson.run(server);
    expect(r.code).toBe(0);
    expect(toolResults(r.events)).toEqual([["count", "4"]]);
    expect(server.problems).toEqual([]);
    expect(server.validationErrors).toEqual([]);
  });
});

describe("Groq: usage in x_groq", () => {
  it("streamed reasoning (gpt-oss) goes back as `reasoning` only; the Groq profile accepts turn 2; exit 0", async () => {
    server = await startChatServer(
      [
        reply.stream({ leadingDeltas: [{ reasoning: "Shout " }, { reasoning: "it." }], toolCalls: [{ id: "fc_1", name: "shout", arguments: '{"text":"g"}' }] }),
        reply.stream({ content: "G." }),
      ],
      { profile: profiles.groq() },
    );
    const r = await projects.plainStream.run(server);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("G.\n");
    const assistant = server.requests[1].messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.reasoning).toBe("Shout it.");
    expect("reasoning_content" in assistant).toBe(false);
    server.assertClean();
  });

  it("the Groq profile has teeth: reasoning_content on a message is refused with Groq's message", async () => {
    server = await startChatServer([reply.json({ content: "never" })], { profile: profiles.groq() });
    const response = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "openai/gpt-oss-120b", messages: [{ role: "user", content: "go" }, { role: "assistant", content: "x", reasoning_content: "r" }] }),
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain("property 'reasoning_content' is unsupported");
    expect(server.refusals).toEqual(["request 1: unknown message field reasoning_content"]);
  });

  it("non-streamed usage carried only in x_groq.usage is counted; exit 0", async () => {
    const body = { id: "g", object: "chat.completion", created: 1, model: "llama", choices: [{ index: 0, finish_reason: "stop", logprobs: null, message: { role: "assistant", content: "ok", refusal: null } }], x_groq: { id: "req_02", usage: { prompt_tokens: 7, completion_tokens: 1 } } };
    server = await startChatServer([{ kind: "json", body }], { profile: profiles.groq() });
    const r = await projects.plainJson.run(server);
    expect(r.code).toBe(0);
    expect(r.end.usage).toEqual({ promptTokens: 7, completionTokens: 1, totalTokens: 8 });
    server.assertClean();
  });

  it("streamed usage carried only in x_groq.usage is counted; exit 0", async () => {
    const chunks = reply.stream({ content: "fast answer" });
    if (chunks.kind !== "sse") throw new Error("expected a stream");
    chunks.chunks.push(streamChunk({}, null, { choices: [], x_groq: { id: "req_01", usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 } } }));
    server = await startChatServer([chunks], { profile: profiles.groq() });
    const r = await projects.plainStream.run(server);
    expect(r.code).toBe(0);
    expect(r.end.usage).toEqual({ promptTokens: 11, completionTokens: 4, totalTokens: 15 });
    server.assertClean();
  });
});
