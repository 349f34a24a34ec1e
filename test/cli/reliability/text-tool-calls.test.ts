/**
 * Hardening through the CLI: an answer that is a JSON object with a `tool_call`
 * key (or `<tool_call>` tags) is the final answer, never a call, unless the spec opts in with
 * `model.textToolCalls: true`. Streamed and non-streamed answers; the parser itself is tested in
 * test/provider/compat/text-calls.test.ts and test/loop/control.test.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../../support/chat-server.js";
import { eventsOf, expectRunEnded, writeSpec, yiem } from "../../fixtures/battery/harness.js";

const dir = mkdtempSync(join(tmpdir(), "yiem-hardening-text-calls-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const JSON_CALL = '{"tool_call": {"name": "echo", "arguments": {"text": "ran"}}}';
const TAGGED_CALL = 'Sure.\n<tool_call>{"name": "echo", "arguments": {"text": "ran"}}</tool_call>';

describe("text that looks like a tool call is an answer unless the spec opts in", () => {
  for (const [slug, form, content] of [["json", "a JSON {tool_call} answer", JSON_CALL], ["tags", "<tool_call> tags", TAGGED_CALL]] as const) {
    for (const stream of [true, false]) {
      const how = stream ? "streamed" : "non-streamed";

      it(`${form}, ${how}, default spec: printed as the answer, nothing runs, one request, exit 0`, async () => {
        const spec = writeSpec(dir, `off-${slug}-${how}`, { model: { stream: String(stream) } });
        server = await startChatServer([stream ? reply.stream({ content }) : reply.json({ content }), reply.json({ content: "never asked" })]);
        const r = await yiem(["run", "-c", spec, "hi"], { server });
        expectRunEnded(r, { code: 0, stopReason: "completed" });
        expect(r.stdout).toBe(`${content}\n`);
        expect(eventsOf(r, "toolExecutionStart")).toEqual([]);
        expect(server.requests).toHaveLength(1);
      });

      it(`${form}, ${how}, model.textToolCalls: true: the call runs and the model is asked again, exit 0`, async () => {
        const spec = writeSpec(dir, `on-${slug}-${how}`, { model: { stream: String(stream), textToolCalls: "true" } });
        server = await startChatServer([stream ? reply.stream({ content }) : reply.json({ content }), reply.json({ content: "done" })]);
        const r = await yiem(["run", "-c", spec, "hi"], { server });
        expectRunEnded(r, { code: 0, stopReason: "completed" });
        expect(r.stdout).toBe("done\n");
        expect(eventsOf(r, "toolExecutionEnd")).toEqual([expect.objectContaining({ toolName: "echo", isError: false })]);
        expect(server.requests).toHaveLength(2);
      });
    }
  }
});

describe("the text-call parser is linear in the answer's length", () => {
  it("a 1 MB hostile answer (a fence, then a megabyte of line breaks and spaces, no closing fence) parses in under 1 s", async () => {
    const { parseTextToolCalls } = await import("../../../src/provider/text-tool-calls.js");
    const hostile = [
      "```\n" + "\n".repeat(1_000_000) + "tool_call",
      "```json" + " \n".repeat(500_000) + '{"tool_call": 1}',
      "```" + "\n".repeat(1_000_000) + "tool_call```x",
    ];
    for (const answer of hostile) {
      const started = performance.now();
      expect(parseTextToolCalls(answer)).toBeNull();
      expect(performance.now() - started).toBeLessThan(1_000);
    }
    // The fenced form still works.
    expect(parseTextToolCalls('```json\n{"tool_call": {"name": "echo", "arguments": {"text": "ran"}}}\n```')?.toolCalls).toEqual([
      { id: "", name: "echo", arguments: '{"text":"ran"}' },
    ]);
  });
});
