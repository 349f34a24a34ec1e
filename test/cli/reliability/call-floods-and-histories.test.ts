/**
 * Floods and bad files.
 * - tool calls per response are capped (limits.maxToolCallsPerResponse, default 128): the next
 *   call is rejected with a message the model can act on, later ones are dropped;
 * - `--session` messages are checked like `--input-format ndjson` lines: a malformed entry or
 *   object `content` is exit 2 naming the file and the entry; a history (session or ndjson) that
 *   calls a tool the spec refuses is exit 2.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../../support/chat-server.js";
import { eventsOf, expectRunEnded, writeSpec, yiem } from "../../fixtures/battery/harness.js";

const dir = mkdtempSync(join(tmpdir(), "yiem-floods-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const echoCalls = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name: "echo", arguments: JSON.stringify({ text: `t${i}` }) }));

describe("a cap on tool calls per response", () => {
  for (const [label, extra, sent, cap] of [["the default (128)", [], 200, 128], ["limits.maxToolCallsPerResponse: 3", ["limits: { maxToolCallsPerResponse: 3 }"], 10, 3]] as const) {
    it(`${label}: ${cap} calls run, the next is rejected with a message for the model, the rest are dropped`, async () => {
      server = await startChatServer([reply.json({ toolCalls: echoCalls(sent) }), reply.json({ content: "done" })]);
      const spec = writeSpec(dir, `cap-${cap}`, { extra: [...extra] });
      const r = await yiem(["run", "-c", spec, "hi"], { server, timeoutMs: 60_000 });
      expectRunEnded(r, { code: 0, stopReason: "completed" });
      expect(eventsOf(r, "toolExecutionEnd")).toHaveLength(cap);
      const rejected = eventsOf(r, "toolCallRejected");
      expect(rejected.map((e) => e.toolCallId)).toEqual([`c${cap}`]);
      expect(rejected[0].reason).toBe(
        `Not executed: the response held ${sent} tool calls and at most ${cap} run per response; this call and the ${sent - cap - 1} after it were not run. Send the calls still needed in your next response, at most ${cap} at once.`,
      );
      const second = server.requests[1].messages as Array<{ role: string; tool_calls?: unknown[] }>;
      expect(second.find((m) => m.role === "assistant")?.tool_calls).toHaveLength(cap + 1);
      expect(second.filter((m) => m.role === "tool")).toHaveLength(cap + 1);
    });
  }
});

describe("--session and --input-format ndjson histories are checked", () => {
  const session = (name: string, messages: unknown[]) => {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify({ version: 1, messages }));
    return file;
  };
  const denySpec = () => writeSpec(dir, "deny", { extra: ['tools: { deny: ["echo"] }'] });

  for (const [label, messages, problem] of [
    ["an assistant entry without content", [{ role: "user", content: "hi" }, { role: "assistant" }], /messages\[1\]: "content" of an assistant message must be a string/],
    ["object content", [{ role: "user", content: { text: "hi" } }], /messages\[0\]: "content" of a user message must be a string/],
    ["a tool result without content parts", [{ role: "tool", toolCallId: "c", toolName: "echo", content: "x", isError: false }], /messages\[0\]: "content" of a tool message must be an array of content parts/],
    ["an entry that is not an object", [null], /messages\[0\]: must be an object/],
  ] as const) {
    it(`a session with ${label}: exit 2 naming the file and the entry`, async () => {
      const file = session(label.replace(/\W+/g, "-"), [...messages]);
      const r = await yiem(["run", "-c", writeSpec(dir, "plain"), "--session", file, "hi"]);
      const end = expectRunEnded(r, { code: 2, stopReason: "error", started: false });
      expect(end.error).toContain(`session file ${file}: `);
      expect(end.error).toMatch(problem);
    });
  }

  it("a session calling a tool the spec denies: exit 2", async () => {
    const file = session("denied", [
      { role: "user", content: "hi" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "echo", arguments: "{}" }] },
      { role: "tool", toolCallId: "c1", toolName: "echo", content: [{ type: "text", text: "x" }], isError: false },
    ]);
    const r = await yiem(["run", "-c", denySpec(), "--session", file, "again"]);
    const end = expectRunEnded(r, { code: 2, stopReason: "error", started: false });
    expect(end.error).toMatch(/messages\[1\]: calls the tool "echo", which this spec does not allow/);
  });

  it("an ndjson history calling a tool the spec denies: exit 2 naming the line", async () => {
    const stdin = [
      JSON.stringify({ role: "user", content: "hi" }),
      JSON.stringify({ role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "echo", arguments: "{}" } }] }),
      JSON.stringify({ role: "tool", tool_call_id: "c1", content: "x" }),
    ].join("\n");
    const r = await yiem(["run", "-c", denySpec(), "--input-format", "ndjson"], { stdin });
    const end = expectRunEnded(r, { code: 2, stopReason: "error", started: false });
    expect(end.error).toMatch(/stdin line 2: calls the tool "echo", which this spec does not allow/);
  });
});
