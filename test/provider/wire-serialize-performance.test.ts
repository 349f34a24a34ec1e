/**
 * serializeRequestBody (the body yiem sends, built from per-message JSON cached by identity and a
 * kept prefix per conversation array) must always equal JSON.stringify(buildRequestBody(…)):
 * across a growing conversation, with images, unknown roles, and messages or arrays changed in
 * place between requests.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ChatMessage, ToolSpec } from "../../src/provider/types.js";
import { buildRequestBody, serializeRequestBody, type BodySettings } from "../../src/provider/wire.js";

const SETTINGS: BodySettings = { model: "m", stream: true };
const TOOLS: ToolSpec[] = [{ name: "noop", description: "d", parameters: { type: "object", properties: { i: { type: "integer" } } } }];

function expectSame(messages: ChatMessage[], settings: BodySettings = SETTINGS, tools: ToolSpec[] = TOOLS): void {
  expect(serializeRequestBody(settings, messages, tools)).toBe(JSON.stringify(buildRequestBody(settings, messages, tools)));
}

const image = (data: string) => ({ type: "image" as const, data, mimeType: "image/png" });
const text = (t: string) => ({ type: "text" as const, text: t });

function roundTrip(i: number): ChatMessage[] {
  return [
    { role: "assistant", content: "", toolCalls: [{ id: `c${i}`, name: "noop", arguments: `{"i":${i}}` }] },
    { role: "tool", toolCallId: `c${i}`, toolName: "noop", isError: false, content: [text("ok")] },
  ];
}

describe("serializeRequestBody", () => {
  it("equals JSON.stringify of the body for every request of a growing conversation", () => {
    const messages: ChatMessage[] = [{ role: "system", content: "sys" }, { role: "user", content: "go \"now\"\n" }];
    expectSame(messages);
    for (let i = 1; i <= 20; i++) {
      messages.push(...roundTrip(i));
      expectSame(messages);
    }
  });

  it("sees messages changed in place between requests", () => {
    const messages: ChatMessage[] = [{ role: "user", content: "a" }, ...roundTrip(1), ...roundTrip(2)];
    expectSame(messages);
    (messages[0] as { content: string }).content = "b";
    expectSame(messages);
    const assistant = messages[1] as Extract<ChatMessage, { role: "assistant" }>;
    assistant.toolCalls[0].arguments = '{"i":9}';
    expectSame(messages);
    assistant.toolCalls.push({ id: "x", name: "noop", arguments: "{}" });
    expectSame(messages);
    assistant.content = "now with text";
    expectSame(messages);
    const tool = messages[2] as Extract<ChatMessage, { role: "tool" }>;
    (tool.content[0] as { text: string }).text = "changed";
    expectSame(messages);
    tool.content.push(text("more"));
    expectSame(messages);
    tool.content.pop();
    expectSame(messages);
    tool.toolCallId = "other";
    expectSame(messages);
  });

  it("sees the array itself changed: replaced, removed and reordered messages", () => {
    const messages: ChatMessage[] = [{ role: "user", content: "a" }, ...roundTrip(1), ...roundTrip(2)];
    expectSame(messages);
    messages[1] = { role: "assistant", content: "replaced", toolCalls: [] };
    expectSame(messages);
    messages.splice(1, 2);
    expectSame(messages);
    messages.reverse();
    expectSame(messages);
    messages.length = 0;
    messages.push({ role: "user", content: "fresh" });
    expectSame(messages);
  });

  it("puts tool images in a user message after the run of tool messages, also at the end", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "draw" },
      { role: "assistant", content: "", toolCalls: [{ id: "a", name: "plot", arguments: "{}" }, { id: "b", name: "plot", arguments: "{}" }] },
      { role: "tool", toolCallId: "a", toolName: "plot", isError: false, content: [image("AAAA"), text("one")] },
    ];
    expectSame(messages);
    messages.push({ role: "tool", toolCallId: "b", toolName: "plot", isError: false, content: [image("BBBB")] });
    expectSame(messages);
    messages.push({ role: "assistant", content: "done", toolCalls: [] });
    expectSame(messages);
    (messages[2] as Extract<ChatMessage, { role: "tool" }>).content[0] = image("CCCC");
    expectSame(messages);
    messages.push(...roundTrip(3));
    expectSame(messages);
  });

  it("leaves out messages of an unknown role, as buildRequestBody does", () => {
    const messages = [{ role: "user", content: "a" }, { role: "critic", content: "?" }, ...roundTrip(1)] as unknown as ChatMessage[];
    expectSame(messages);
    messages.push(...roundTrip(2));
    expectSame(messages);
  });

  it("keeps every setting, with no tools key when there are no tools, and odd model names", () => {
    const messages: ChatMessage[] = [{ role: "user", content: "a" }, ...roundTrip(1)];
    expectSame(messages, { model: 'x"messages":[]', stream: false, temperature: 0.5, maxTokens: 10 }, []);
    expectSame(messages, { model: "m", stream: true, maxTokens: 0 }, TOOLS);
    expectSame([], SETTINGS, TOOLS);
  });

  it("conversations that share messages do not share a prefix", () => {
    const shared: ChatMessage[] = [{ role: "user", content: "a" }, ...roundTrip(1)];
    const first = [...shared];
    const second = [...shared, ...roundTrip(2)];
    expectSame(first);
    expectSame(second);
    first.push({ role: "user", content: "only in first" });
    expectSame(first);
    expectSame(second);
  });

  it("property: any sequence of appends, edits and removals serialises like JSON.stringify", () => {
    const textArb = fc.string({ maxLength: 6 });
    const part = fc.oneof(textArb.map(text), textArb.map(image));
    const message: fc.Arbitrary<ChatMessage> = fc.oneof(
      textArb.map((content): ChatMessage => ({ role: "user", content })),
      fc.record({ content: textArb, calls: fc.array(textArb, { maxLength: 2 }) }).map(({ content, calls }): ChatMessage => ({
        role: "assistant",
        content,
        toolCalls: calls.map((a, i) => ({ id: `id${i}`, name: "t", arguments: a })),
      })),
      fc.array(part, { maxLength: 3 }).map((content): ChatMessage => ({ role: "tool", toolCallId: "id", toolName: "t", isError: false, content })),
    );
    const step = fc.oneof(
      message.map((m) => ({ kind: "push" as const, m })),
      fc.record({ kind: fc.constant("edit" as const), at: fc.nat(), value: textArb }),
      fc.record({ kind: fc.constant("remove" as const), at: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 25 }), (steps) => {
        const messages: ChatMessage[] = [];
        for (const s of steps) {
          if (s.kind === "push") messages.push(s.m);
          else if (messages.length > 0 && s.kind === "remove") messages.splice(s.at % messages.length, 1);
          else if (messages.length > 0 && s.kind === "edit") {
            const target = messages[s.at % messages.length];
            if (target.role === "tool") {
              if (target.content[0]?.type === "text") target.content[0].text = s.value;
              else target.content.push(text(s.value));
            } else if (target.role === "assistant" && target.toolCalls[0]) target.toolCalls[0].arguments = s.value;
            else (target as { content: string }).content = s.value;
          }
          expect(serializeRequestBody(SETTINGS, messages, TOOLS)).toBe(JSON.stringify(buildRequestBody(SETTINGS, messages, TOOLS)));
        }
      }),
      { numRuns: 300 },
    );
  });
});
