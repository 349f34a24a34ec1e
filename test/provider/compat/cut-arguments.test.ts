/**
 * Tool-call arguments the server could not parse are never sent back as they
 * came. A call cut by the length limit, or whose arguments are not a JSON object, is rejected,
 * and the assistant message of the next request carries `{}` (or the object yiem read) instead;
 * the raw text stays in the rejection's tool result and in the events. llama.cpp's server answers
 * HTTP 500 "Failed to parse tool call arguments as JSON" to any request whose history holds
 * unparseable arguments.
 */
import { describe, expect, it } from "vitest";
import { buildRequestBody, wireArguments } from "../../../src/provider/wire.js";
import { reply, type ChatReply } from "../../support/chat-server.js";
import { profiles } from "../../support/server-profiles.js";
import { useCompatProjects } from "../../support/compat-cli.js";

const compat = useCompatProjects();

type Event = Record<string, any>;

const cases: Array<{ name: string; raw: string; first: (stream: boolean) => ChatReply; sentBack: string; rejected: RegExp | null; rejectedArgs?: unknown }> = [
  {
    name: "a call cut by the length limit inside its arguments",
    raw: '{"text": "Tok',
    first: (stream) => (stream ? reply.stream : reply.json)({ toolCalls: [{ name: "shout", arguments: '{"text": "Tok' }], finishReason: "length" }),
    sentBack: "{}",
    rejected: /cut by the length limit.*Received arguments: \{"text": "Tok/,
  },
  {
    name: "arguments that are not JSON at all",
    raw: "text=Tokyo",
    first: (stream) => (stream ? reply.stream : reply.json)({ toolCalls: [{ name: "shout", arguments: "text=Tokyo" }] }),
    sentBack: "{}",
    rejected: /Invalid arguments for tool "shout": arguments are not valid JSON.*Received arguments: text=Tokyo/,
  },
  {
    name: "arguments that are JSON but not an object",
    raw: '["Tokyo"]',
    first: (stream) => (stream ? reply.stream : reply.json)({ toolCalls: [{ name: "shout", arguments: '["Tokyo"]' }] }),
    sentBack: "{}",
    rejected: /arguments must be a JSON object, got an array/,
  },
  {
    name: "empty arguments (read as {}, rejected by the tool's schema)",
    raw: "",
    first: (stream) => (stream ? reply.stream : reply.json)({ toolCalls: [{ name: "shout", arguments: "" }] }),
    sentBack: "{}",
    rejected: /text/,
    rejectedArgs: {},
  },
  {
    name: "double-encoded arguments (executed; the object yiem read goes back)",
    raw: '"{\\"text\\":\\"ab\\"}"',
    first: (stream) => (stream ? reply.stream : reply.json)({ toolCalls: [{ name: "shout", arguments: '"{\\"text\\":\\"ab\\"}"' }] }),
    sentBack: '{"text":"ab"}',
    rejected: null,
  },
];

describe("llama.cpp: the next request carries arguments it can parse (through the CLI)", () => {
  for (const stream of [true, false]) {
    for (const c of cases) {
      it(`${stream ? "streamed" : "non-streamed"}: ${c.name}; the model resends and the run completes (exit 0)`, async () => {
        const next = stream ? reply.stream : reply.json;
        const server = await compat.serve(
          [c.first(stream), next({ toolCalls: [{ name: "shout", arguments: '{"text":"tokyo"}' }] }), next({ content: "TOKYO it is" })],
          { profile: profiles.llamaCpp() },
        );
        const r = await (stream ? compat.streaming : compat.plain).run(server, "shout tokyo");
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toBe("TOKYO it is\n");
        expect(r.end).toMatchObject({ stopReason: "completed", turns: 3 });
        // The events keep the raw text.
        const events = r.events as Event[];
        expect(events.find((e) => e.type === "messageEnd")!.message.toolCalls[0].arguments).toBe(c.raw);
        const turn2 = server.requests[1].messages as Event[];
        const assistant = turn2.find((m) => m.role === "assistant")!;
        expect(assistant.tool_calls[0].function.arguments).toBe(c.sentBack);
        const toolMessage = turn2.find((m) => m.role === "tool")!;
        if (c.rejected) {
          const rejection = events.find((e) => e.type === "toolCallRejected")!;
          expect(rejection.args).toEqual("rejectedArgs" in c ? c.rejectedArgs : c.raw);
          expect(rejection.reason).toMatch(c.rejected);
          expect(toolMessage.content).toMatch(c.rejected);
        } else {
          expect(toolMessage.content).toBe("AB");
        }
        server.assertClean();
      });
    }
  }
});

describe("wireArguments", () => {
  it("keeps a JSON object byte for byte, replaces what no server can parse", () => {
    expect(wireArguments('{ "a" : 1 }')).toBe('{ "a" : 1 }');
    expect(wireArguments('{"a": "cut')).toBe("{}");
    expect(wireArguments("not json")).toBe("{}");
    expect(wireArguments("null")).toBe("{}");
    expect(wireArguments("42")).toBe("{}");
    expect(wireArguments("  ")).toBe("{}");
    expect(wireArguments('"{\\"a\\":1}"')).toBe('{"a":1}');
  });

  it("the message in the session keeps the raw text; only the wire form changes", () => {
    const messages = [{ role: "assistant" as const, content: "", toolCalls: [{ id: "c1", name: "shout", arguments: '{"text": "Tok' }] }];
    const body = buildRequestBody({ model: "m", stream: false }, messages, []);
    expect(body.messages[0]).toEqual({ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "shout", arguments: "{}" } }] });
    expect(messages[0].toolCalls[0].arguments).toBe('{"text": "Tok');
  });
});
