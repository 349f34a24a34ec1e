/**
 * The non-standard single `tool_call` block is a wire detail the provider normalises: every
 * provider hands the loop `toolCalls` (src/provider/text-tool-calls.ts `callsWithBlock`).
 */
import { describe, expect, it } from "vitest";
import { callsWithBlock } from "../../src/provider/text-tool-calls.js";
import { parseWireMessage } from "../../src/provider/wire-response.js";
import { createScriptedProvider } from "../../src/provider/scripted.js";
import { extractToolCalls } from "../../src/loop/tool-calls.js";

const request = () => ({ messages: [{ role: "user" as const, content: "hi" }], tools: [], signal: new AbortController().signal });

describe("the tool_call block", () => {
  it("becomes the message's one tool call; tool_calls win when both are there", () => {
    expect(callsWithBlock([], { name: "echo", arguments: { text: "x" } })).toEqual([{ id: "", name: "echo", arguments: '{"text":"x"}' }]);
    const listed = [{ id: "a", name: "first", arguments: "{}" }];
    expect(callsWithBlock(listed, { name: "echo" })).toBe(listed);
    expect(callsWithBlock([], { nothing: true })).toEqual([]);
  });

  it("is normalised by the wire parser and by the scripted provider", async () => {
    const parsed = parseWireMessage({ role: "assistant", content: "", tool_call: { id: "b1", function: { name: "echo", arguments: "{}" } } });
    expect(parsed.toolCalls).toEqual([{ id: "b1", name: "echo", arguments: "{}" }]);
    const response = await createScriptedProvider([{ toolCallBlock: { name: "echo", arguments: {} } }]).complete(request());
    expect(response.message.toolCalls).toEqual([{ id: "", name: "echo", arguments: "{}" }]);
  });

  it("the loop reads toolCalls only: a block the provider did not normalise is not a call", () => {
    const extracted = extractToolCalls({ role: "assistant", content: "", toolCalls: [], toolCallBlock: { name: "echo", arguments: {} } }, () => "id");
    expect(extracted.toolCalls).toEqual([]);
  });
});
