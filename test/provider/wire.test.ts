import { describe, expect, it } from "vitest";
import { toWireMessages } from "../../src/provider/wire.js";
import { parseUsage, parseWireMessage } from "../../src/provider/wire-response.js";
import { sseData, StreamAssembler } from "../../src/provider/openai-stream.js";
import { schemaErrors } from "../support/chat-server.js";

describe("wire translation", () => {
  it("puts tool images after the run of tool messages, in a user message with data URLs", () => {
    const wire = toWireMessages([
      { role: "user", content: "draw" },
      { role: "assistant", content: "Sure.", toolCalls: [{ id: "a", name: "plot", arguments: "{}" }, { id: "b", name: "plot", arguments: "{}" }] },
      { role: "tool", toolCallId: "a", toolName: "plot", isError: false, content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] },
      { role: "tool", toolCallId: "b", toolName: "plot", isError: false, content: [{ type: "image", data: "BBBB", mimeType: "image/jpeg" }] },
      { role: "assistant", content: "Here they are.", toolCalls: [] },
    ]);
    expect(wire.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "user", "assistant"]);
    expect(wire[1]).toMatchObject({ content: "Sure." });
    expect(wire[2]).toEqual({ role: "tool", tool_call_id: "a", name: "plot", content: "[image 1 (image/png) is attached in the next user message]" });
    const images = wire[4].content as Array<{ type: string; image_url?: { url: string } }>;
    expect(images.filter((p) => p.type === "image_url").map((p) => p.image_url!.url)).toEqual([
      "data:image/png;base64,AAAA",
      "data:image/jpeg;base64,BBBB",
    ]);
    expect(wire[5]).toEqual({ role: "assistant", content: "Here they are." });
    const body = { model: "m", messages: wire };
    expect(schemaErrors("request", body, "body")).toEqual([]);
  });

  it("the schema check catches what real servers would reject", () => {
    expect(schemaErrors("request", { model: "m", messages: [{ role: "tool", content: "x" }] }, "r").length).toBeGreaterThan(0);
    const chunk = { id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "done" }] };
    expect(schemaErrors("chunk", chunk, "c").join("\n")).toContain("finish_reason");
  });

  it("parses a response message, tolerating missing ids, object arguments and refusals", () => {
    expect(
      parseWireMessage({
        role: "assistant",
        content: null,
        tool_calls: [{ type: "function", function: { name: "f", arguments: { a: 1 } } }],
      }),
    ).toEqual({ role: "assistant", content: "", toolCalls: [{ id: "", name: "f", arguments: '{"a":1}' }] });
    expect(parseWireMessage({ role: "assistant", content: null, refusal: "I can't" }).content).toBe("I can't");
    expect(parseUsage({ prompt_tokens: 2, completion_tokens: 3 })).toEqual({ promptTokens: 2, completionTokens: 3, totalTokens: 5 });
    expect(parseUsage(undefined)).toEqual({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });
  });
});

describe("stream reading", () => {
  async function* bytes(...pieces: string[]) {
    for (const piece of pieces) yield new TextEncoder().encode(piece);
  }

  it("splits SSE events across arbitrary byte boundaries and line endings", async () => {
    const events: string[] = [];
    for await (const data of sseData(bytes(": comment\n", "data: {\"a\"", ":1}\r", "\n\r\ndata: [DO", "NE]\n\n", "data: tail"))) events.push(data);
    expect(events).toEqual(['{"a":1}', "[DONE]", "tail"]);
  });

  it("continues index-less tool-call deltas and ignores repeated ids and names", () => {
    const assembler = new StreamAssembler();
    const delta = (d: object, finish: string | null = null) => ({ choices: [{ index: 0, delta: d, finish_reason: finish }] });
    assembler.pushChunk(delta({ tool_calls: [{ id: "x", function: { name: "f", arguments: '{"a"' } }] }));
    assembler.pushChunk(delta({ tool_calls: [{ id: "x", function: { name: "f", arguments: ":1}" } }] }));
    assembler.pushChunk(delta({ tool_calls: [{ id: "y", function: { name: "g", arguments: "{}" } }] }));
    expect(assembler.complete).toBe(false);
    assembler.pushChunk(delta({}, "tool_calls"));
    expect(assembler.complete).toBe(true);
    expect(assembler.result().message.toolCalls).toEqual([
      { id: "x", name: "f", arguments: '{"a":1}' },
      { id: "y", name: "g", arguments: "{}" },
    ]);
  });

  it("turns an error payload in the stream into an error", () => {
    const assembler = new StreamAssembler();
    expect(() => assembler.pushData(JSON.stringify({ error: { message: "context too long" } }))).toThrow("context too long");
  });
});
