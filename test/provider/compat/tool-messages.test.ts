/**
 * Tool messages carry the tool's `name` (Gemini's endpoint requires it), and
 * calls the server sent without an id get ids unique across the whole run (not `call_0` every turn).
 */
import { describe, expect, it } from "vitest";
import { reply, streamChunk, type ChatReply, type ChatServer } from "../../support/chat-server.js";
import { profiles } from "../../support/server-profiles.js";
import { useCompatProjects } from "../../support/compat-cli.js";

const compat = useCompatProjects();

/** A streamed turn with one call and no id anywhere. */
const streamedWithoutId = (name: string, args: string): ChatReply => ({
  kind: "sse",
  chunks: [
    streamChunk({ role: "assistant", content: "" }),
    streamChunk({ tool_calls: [{ index: 0, type: "function", function: { name, arguments: args } }] }),
    streamChunk({}, "tool_calls"),
  ],
});

/** A JSON turn whose calls have no id (not valid against the official schema, hence validate: false). */
const jsonWithoutIds = (...calls: Array<[string, string]>): ChatReply => ({
  kind: "json",
  validate: false,
  body: {
    id: "x",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [{ index: 0, finish_reason: "tool_calls", message: { role: "assistant", content: null, tool_calls: calls.map(([name, args]) => ({ type: "function", function: { name, arguments: args } })) } }],
  },
});

function checkIdsAndNames(s: ChatServer, toolCount: number) {
  const last = s.requests.at(-1).messages as Array<Record<string, any>>;
  const callIds = last.filter((m) => m.role === "assistant" && m.tool_calls).flatMap((m) => m.tool_calls.map((c: { id: string }) => c.id));
  const tools = last.filter((m) => m.role === "tool");
  expect(callIds).toHaveLength(toolCount);
  expect(new Set(callIds).size).toBe(toolCount);
  expect(callIds.every((id) => id !== "" && id !== "call_0")).toBe(true);
  expect(tools.map((m) => m.tool_call_id)).toEqual(callIds);
  for (const m of tools) expect(m.name).toMatch(/^(shout|count)$/);
}

describe("Gemini: tool messages carry name; missing ids are unique across the run", () => {
  it("streamed calls without ids over two turns: distinct ids, named tool messages, Gemini accepts every request; exit 0", async () => {
    const server = await compat.serve(
      [streamedWithoutId("shout", '{"text":"a"}'), streamedWithoutId("count", '{"text":"abc"}'), reply.stream({ content: "done" })],
      { profile: profiles.gemini() },
    );
    const r = await compat.streaming.run(server);
    expect(r.code).toBe(0);
    expect(r.end).toMatchObject({ stopReason: "completed", toolCalls: 2 });
    checkIdsAndNames(server, 2);
    const tools = server.requests[2].messages.filter((m: { role: string }) => m.role === "tool");
    expect(tools.map((m: { name: string }) => m.name)).toEqual(["shout", "count"]);
    server.assertClean();
  });

  it("non-streamed: two id-less calls per turn over two turns get four distinct ids; exit 0", async () => {
    const server = await compat.serve(
      [
        jsonWithoutIds(["shout", '{"text":"a"}'], ["count", '{"text":"ab"}']),
        jsonWithoutIds(["shout", '{"text":"b"}'], ["count", '{"text":"abc"}']),
        reply.json({ content: "done" }),
      ],
      { profile: profiles.gemini() },
    );
    const r = await compat.plain.run(server);
    expect(r.code).toBe(0);
    expect(r.end).toMatchObject({ stopReason: "completed", toolCalls: 4 });
    checkIdsAndNames(server, 4);
    const ends = r.events.filter((e) => e.type === "toolExecutionEnd").map((e) => e.toolCallId);
    expect(new Set(ends).size).toBe(4);
    expect(server.problems).toEqual([]);
    expect(server.refusals).toEqual([]);
  });

  it("the Mistral profile refuses tool-call ids that are not 9 letters or digits, with Mistral's message", async () => {
    const server = await compat.serve([reply.json({ content: "never" })], { profile: profiles.mistral() });
    const response = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "mistral-large-latest",
        messages: [
          { role: "user", content: "go" },
          { role: "assistant", content: null, tool_calls: [{ id: "call_0", type: "function", function: { name: "shout", arguments: "{}" } }] },
          { role: "tool", tool_call_id: "call_0", name: "shout", content: "X" },
        ],
      }),
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain("Tool call id was call_0 but must be a-z, A-Z, 0-9, with a length of 9.");
    expect(server.refusals).toEqual(["request 1: tool call id call_0"]);
  });

  it("the profile has teeth: a tool message without name is refused with Gemini's array body", async () => {
    const server = await compat.serve([reply.json({ content: "never" })], { profile: profiles.gemini() });
    const response = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "gemini-2.5-flash",
        messages: [
          { role: "user", content: "go" },
          { role: "assistant", content: null, tool_calls: [{ id: "a", type: "function", function: { name: "shout", arguments: "{}" } }] },
          { role: "tool", tool_call_id: "a", content: "X" },
        ],
      }),
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain("Name cannot be empty");
    expect(server.refusals).toEqual(["request 1: tool message without name"]);
  });
});
