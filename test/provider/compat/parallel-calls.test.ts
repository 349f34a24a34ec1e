/**
 * Parallel tool calls that share one stream `index` but
 * bring a new id and a name (SGLang, lmdeploy, Gemini), or a name and no id at all after a whole
 * JSON object (Gemini), are separate calls; a new id on every chunk with an empty name (OCI)
 * continues one call.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { StreamAssembler } from "../../../src/provider/openai-stream.js";
import { reply, startChatServer, streamChunk, type ChatReply, type ChatServer, type ServerProfile } from "../../support/chat-server.js";
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

const call = (index: number | undefined, id: string | undefined, name: string | undefined, args: string) => ({
  ...(index === undefined ? {} : { index }),
  ...(id === undefined ? {} : { id, type: "function" }),
  function: { ...(name === undefined ? {} : { name }), arguments: args },
});

const stream = (deltas: object[][], validate = true): ChatReply => ({
  kind: "sse",
  chunks: [
    streamChunk({ role: "assistant", content: "" }),
    ...deltas.map((toolCalls) => streamChunk({ tool_calls: toolCalls })),
    streamChunk({}, "tool_calls"),
  ],
  validate,
});

const TWO_CALLS = [
  { name: "shout", arguments: '{"text":"ab"}', result: "AB" },
  { name: "count", arguments: '{"text":"abc"}', result: "3" },
];

const servers: Array<{ name: string; reply: ChatReply; ids: string[]; profile?: () => ServerProfile }> = [
  {
    name: "SGLang: index 0 for both, each call's id and name first, then its argument pieces",
    reply: stream([
      [call(0, "call_s1", "shout", "")],
      [call(0, undefined, undefined, '{"text"')],
      [call(0, undefined, undefined, ':"ab"}')],
      [call(0, "call_s2", "count", "")],
      [call(0, undefined, undefined, '{"text":"abc"}')],
    ]),
    ids: ["call_s1", "call_s2"],
  },
  {
    name: "lmdeploy: index 0 for both, each call whole in one chunk",
    reply: stream([[call(0, "chatcmpl-tool-1", "shout", '{"text":"ab"}')], [call(0, "chatcmpl-tool-2", "count", '{"text":"abc"}')]]),
    ids: ["chatcmpl-tool-1", "chatcmpl-tool-2"],
  },
  {
    name: "Gemini: both calls in one chunk, both index 0",
    reply: stream([[call(0, "function-call-1", "shout", '{"text":"ab"}'), call(0, "function-call-2", "count", '{"text":"abc"}')]]),
    ids: ["function-call-1", "function-call-2"],
    profile: profiles.gemini,
  },
  {
    name: "Gemini without ids: both calls in one chunk on index 0, no id on either",
    reply: stream([[call(0, undefined, "shout", '{"text":"ab"}'), call(0, undefined, "count", '{"text":"abc"}')]]),
    ids: [],
    profile: profiles.gemini,
  },
  {
    name: "Gemini without ids: one call per chunk on index 0, empty ids",
    reply: stream([[call(0, "", "shout", '{"text":"ab"}')], [call(0, "", "count", '{"text":"abc"}')]], false),
    ids: [],
    profile: profiles.gemini,
  },
  {
    name: "no ids: each call's name first with empty arguments, then its pieces, all on index 0",
    reply: stream([
      [call(0, undefined, "shout", "")],
      [call(0, undefined, undefined, '{"text"')],
      [call(0, undefined, undefined, ':"ab"}')],
      [call(0, undefined, "count", "")],
      [call(0, undefined, undefined, '{"text":')],
      [call(0, undefined, undefined, '"abc"}')],
    ]),
    ids: [],
  },
  {
    name: "no index at all: a new id with a name starts the next call",
    reply: stream([[call(undefined, "n1", "shout", '{"text":"ab"}')], [call(undefined, "n2", "count", '{"text":"abc"}')]], false),
    ids: ["n1", "n2"],
  },
];

describe("parallel calls on one index are separate calls (through the CLI, exit 0)", () => {
  for (const s of servers) {
    it(s.name, async () => {
      server = await startChatServer([s.reply, reply.stream({ content: "done" })], { profile: s.profile?.() ?? profiles.lenient(s.name.split(":")[0]) });
      const r = await project.run(server);
      expect(r.code).toBe(0);
      expect(r.end).toMatchObject({ stopReason: "completed", toolCalls: 2 });
      const results = r.events.filter((e) => e.type === "toolExecutionEnd") as Array<Record<string, any>>;
      expect(results.map((e) => [e.toolName, e.result.content[0].text])).toEqual(TWO_CALLS.map((c) => [c.name, c.result]));
      const sent = server.requests[1].messages;
      const assistant = sent.find((m: { role: string }) => m.role === "assistant");
      // Without ids from the server, the loop gives each call its own (call_<run>_<n>).
      const ids: string[] = s.ids.length > 0 ? s.ids : assistant.tool_calls.map((c: { id: string }) => c.id);
      expect(new Set(ids).size).toBe(2);
      if (s.ids.length === 0) for (const id of ids) expect(id).toMatch(/^call_[0-9a-f]{8}_\d+$/);
      expect(assistant.tool_calls.map((c: { id: string; function: { name: string; arguments: string } }) => [c.id, c.function.name, c.function.arguments])).toEqual(
        TWO_CALLS.map((c, i) => [ids[i], c.name, c.arguments]),
      );
      expect(sent.filter((m: { role: string }) => m.role === "tool").map((m: { tool_call_id: string; name: string }) => [m.tool_call_id, m.name])).toEqual(
        ids.map((id, i) => [id, TWO_CALLS[i].name]),
      );
      server.assertClean();
    });
  }

  it("OCI: a new id on every chunk with an empty name stays one call", async () => {
    server = await startChatServer(
      [
        stream([
          [call(0, "oci-1", "shout", "")],
          [call(0, "oci-2", "", '{"te')],
          [call(0, "oci-3", "", 'xt":"ab"}')],
        ]),
        reply.stream({ content: "done" }),
      ],
      { profile: profiles.lenient("oci") },
    );
    const r = await project.run(server);
    expect(r.code).toBe(0);
    expect(r.end).toMatchObject({ stopReason: "completed", toolCalls: 1 });
    const assistant = server.requests[1].messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.tool_calls).toEqual([{ id: "oci-1", type: "function", function: { name: "shout", arguments: '{"text":"ab"}' } }]);
    server.assertClean();
  });
});

describe("StreamAssembler tool-call rules", () => {
  const assemble = (...deltas: object[][]) => {
    const a = new StreamAssembler();
    for (const d of deltas) a.pushChunk({ choices: [{ index: 0, delta: { tool_calls: d } }] });
    return a.result().message.toolCalls;
  };

  it("a server that repeats the same id and name on every chunk makes one call", () => {
    expect(assemble([call(0, "x", "shout", '{"a"')], [call(0, "x", "shout", ":1}")])).toEqual([{ id: "x", name: "shout", arguments: '{"a":1}' }]);
  });

  it("the same function twice on one index with new ids makes two calls", () => {
    expect(assemble([call(0, "x1", "shout", "{}")], [call(0, "x2", "shout", "{}")])).toEqual([
      { id: "x1", name: "shout", arguments: "{}" },
      { id: "x2", name: "shout", arguments: "{}" },
    ]);
  });

  it("without ids, a name on a later delta never splits the call; missing ids stay empty for the loop to fill", () => {
    expect(assemble([call(0, undefined, "shout", '{"a"')], [call(0, undefined, "shout", ":1}")])).toEqual([{ id: "", name: "shout", arguments: '{"a":1}' }]);
    expect(assemble([call(0, "", "shout", "{}")], [call(0, "late-id", "shout", "")])).toEqual([{ id: "late-id", name: "shout", arguments: "{}" }]);
  });

  it("without ids, a name after a whole JSON object starts a new call, also for the same function", () => {
    expect(assemble([call(0, undefined, "shout", '{"text":"a"}')], [call(0, undefined, "shout", '{"text":"b"}')])).toEqual([
      { id: "", name: "shout", arguments: '{"text":"a"}' },
      { id: "", name: "shout", arguments: '{"text":"b"}' },
    ]);
    expect(assemble([call(0, undefined, "shout", '{"text":"a"}'), call(0, undefined, "count", " { } ")])).toEqual([
      { id: "", name: "shout", arguments: '{"text":"a"}' },
      { id: "", name: "count", arguments: " { } " },
    ]);
  });

  it("without ids, a name repeated with no argument text after a whole object is a repeat unless pieces follow", () => {
    expect(assemble([call(0, undefined, "shout", '{"a":1}')], [call(0, undefined, "shout", "")])).toEqual([{ id: "", name: "shout", arguments: '{"a":1}' }]);
    expect(assemble([call(0, undefined, "shout", '{"a":1}')], [call(0, undefined, "count", "")], [call(0, undefined, undefined, '{"b":2}')])).toEqual([
      { id: "", name: "shout", arguments: '{"a":1}' },
      { id: "", name: "count", arguments: '{"b":2}' },
    ]);
  });

  it("a name with the call's own id never splits it, even after a whole object", () => {
    expect(assemble([call(0, "x", "shout", '{"a":1}')], [call(0, "x", "shout", "")])).toEqual([{ id: "x", name: "shout", arguments: '{"a":1}' }]);
  });

  it("distinct indexes still interleave correctly", () => {
    expect(assemble([call(0, "a", "shout", "")], [call(1, "b", "count", "")], [call(0, undefined, undefined, "{}")], [call(1, undefined, undefined, "[]")])).toEqual([
      { id: "a", name: "shout", arguments: "{}" },
      { id: "b", name: "count", arguments: "[]" },
    ]);
  });
});
