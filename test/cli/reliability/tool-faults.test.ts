/**
 * Battery: faults from tools. A tool that throws, never resolves, ignores its abort signal,
 * returns a malformed result or produces 50 MB, calls process.exit or throws an Error whose
 * message cannot be read: each becomes an error result (or a cut result), the run continues or
 * ends as the contract says, with one agentEnd.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MAX_RESULT_CHARS } from "../../../src/loop/execute.js";
import { defineTool, toolResult } from "../../../src/tools/define.js";
import { reply, startChatServer, type ChatServer } from "../../support/chat-server.js";
import { echoTool, runScripted, textOf, toolMessages } from "../../support/loop.js";
import { eventsOf, expectRunEnded, writeSpec, yiem } from "../../fixtures/battery/harness.js";

const call = (id: string, name: string, args: object = {}) => ({ id, name, arguments: JSON.stringify(args) });
const FIFTY_MB = 50 * 1024 * 1024;

describe("tool faults in the loop", () => {
  it("a tool that throws (or throws synchronously, or rejects with a non-Error): error results, the run goes on", async () => {
    const throwsAsync = defineTool({ ...echoTool("throwsAsync"), execute: async () => { throw new Error("async failure"); } });
    const throwsSync = defineTool({ ...echoTool("throwsSync"), execute: () => { throw new TypeError("sync failure"); } });
    const rejectsValue = defineTool({ ...echoTool("rejectsValue"), execute: () => Promise.reject({ code: 42 }) });
    const { result, ofType } = await runScripted(
      [{ toolCalls: [call("a", "throwsAsync"), call("b", "throwsSync"), call("c", "rejectsValue")] }, { content: "handled" }],
      [throwsAsync, throwsSync, rejectsValue],
    );
    expect(result).toMatchObject({ stopReason: "completed", text: "handled" });
    const results = toolMessages(result.messages);
    expect(results.every((m) => m.isError)).toBe(true);
    expect(results.map((m) => textOf(m.content))).toEqual([
      'Tool "throwsAsync" failed: async failure',
      'Tool "throwsSync" failed: sync failure',
      'Tool "rejectsValue" failed: {"code":42}',
    ]);
    expect(ofType("toolExecutionEnd").map((e) => e.isError)).toEqual([true, true, true]);
    expect(ofType("agentEnd")).toHaveLength(1);
  });

  it("a tool that never resolves: the per-call timeout gives it an error result, the run goes on", async () => {
    const never = defineTool({ ...echoTool("never"), execute: () => new Promise<never>(() => {}) });
    const { result, ofType } = await runScripted([{ toolCalls: [call("n", "never")] }, { content: "moved on" }], [never], {
      limits: { toolTimeoutMs: 40 },
    });
    expect(result).toMatchObject({ stopReason: "completed", text: "moved on" });
    expect(textOf(toolMessages(result.messages)[0].content)).toBe('Tool "never" timed out after 40 ms.');
    expect(ofType("agentEnd")).toHaveLength(1);
  });

  it("a tool that ignores its abort signal is left behind: timeout and run abort both still end the call", async () => {
    let late = 0;
    const deaf = defineTool({
      ...echoTool("deaf"),
      execute: async (_id, _args, _signal, onPartial) => {
        await new Promise((r) => setTimeout(r, 150));
        onPartial("too late"); // after its call ended: dropped
        late += 1;
        return toolResult("too late");
      },
    });
    const timedOut = await runScripted([{ toolCalls: [call("d", "deaf")] }, { content: "ok" }], [deaf], { limits: { toolTimeoutMs: 20 } });
    expect(timedOut.result.stopReason).toBe("completed");
    expect(toolMessages(timedOut.result.messages)[0].isError).toBe(true);

    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stop")), 20);
    const aborted = await runScripted([{ toolCalls: [call("d", "deaf")] }, { content: "never" }], [deaf], { signal: controller.signal });
    expect(aborted.result.stopReason).toBe("aborted");
    expect(textOf(toolMessages(aborted.result.messages)[0].content)).toContain("aborted");
    expect(aborted.ofType("agentEnd")).toHaveLength(1);

    await new Promise((r) => setTimeout(r, 200));
    expect(late).toBe(2); // both calls finished in the background…
    for (const run of [timedOut, aborted]) {
      // …and nothing of theirs reached the event stream after toolExecutionEnd.
      expect(run.ofType("toolExecutionUpdate")).toHaveLength(0);
      expect(run.types.at(-1)).toBe("agentEnd");
    }
  });

  it("non-conforming results are error results that say what is wrong", async () => {
    const shapes: unknown[] = [
      null,
      42,
      { content: "not an array" },
      { content: [{ type: "text" }] },
      { content: [{ type: "image", data: 5 }] },
      { content: [{ type: "video", url: "x" }] },
      Object.defineProperty({}, "content", { get: () => { throw new Error("getter exploded"); } }),
    ];
    const tools = shapes.map((shape, i) => defineTool({ ...echoTool(`shape${i}`), execute: async () => shape as never }));
    const { result, ofType } = await runScripted(
      [{ toolCalls: shapes.map((_, i) => call(`s${i}`, `shape${i}`)) }, { content: "survived" }],
      tools,
    );
    expect(result).toMatchObject({ stopReason: "completed", text: "survived" });
    const texts = toolMessages(result.messages).map((m) => (m.isError ? textOf(m.content) : "NOT AN ERROR"));
    expect(texts.slice(0, 6).every((t) => t.includes("returned an invalid result"))).toBe(true);
    expect(texts[0]).toContain("got null");
    expect(texts[2]).toContain('"content" must be an array');
    expect(texts[6]).toContain("getter exploded");
    expect(ofType("agentEnd")).toHaveLength(1);
  });

  it("a 50 MB result and a 50 MB partial result are cut with a marker before they reach events or the model", async () => {
    const huge = defineTool({
      ...echoTool("huge"),
      execute: async (_id, _args, _signal, onPartial) => {
        onPartial("p".repeat(FIFTY_MB));
        return toolResult("h".repeat(FIFTY_MB));
      },
    });
    const { result, ofType, provider } = await runScripted([{ toolCalls: [call("h", "huge")] }, { content: "digested" }], [huge]);
    expect(result.stopReason).toBe("completed");
    const sent = textOf(toolMessages(provider.requests[1].messages)[0].content);
    expect(sent.length).toBeLessThan(MAX_RESULT_CHARS + 200);
    expect(sent).toMatch(/\[… output cut: \d+ more characters not shown\]$/);
    expect(JSON.stringify(ofType("toolExecutionEnd")[0]).length).toBeLessThan(MAX_RESULT_CHARS + 1000);
    expect(JSON.stringify(ofType("toolExecutionUpdate")[0]).length).toBeLessThan(MAX_RESULT_CHARS + 1000);
  });
});

describe("tool faults through the CLI", () => {
  let dir: string;
  let server: ChatServer | undefined;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "yiem-battery-tools-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("throwing, malformed and 50 MB tools (TS and command) in one turn: reported, cut, the run completes in bounded memory", async () => {
    server = await startChatServer([
      reply.json({ toolCalls: [call("b", "boom"), call("s", "badShape"), call("h", "huge"), call("f", "flood")] }),
      reply.json({ content: "survived it all" }),
    ]);
    const spec = writeSpec(dir, "tool-faults");
    // A small heap: holding 50 MB results (or 50 MB of events) more than once would crash the run.
    const r = await yiem(["run", "-c", spec, "--tool-execution", "parallel", "go"], {
      server,
      env: { NODE_OPTIONS: "--max-old-space-size=160" },
    });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    expect(r.stdout).toBe("survived it all\n");
    const ends = Object.fromEntries(eventsOf(r, "toolExecutionEnd").map((e) => [e.toolCallId, e]));
    expect(ends.b).toMatchObject({ isError: true, result: { content: [{ text: 'Tool "boom" failed: tool exploded on purpose' }] } });
    expect(ends.s.isError).toBe(true);
    expect(ends.s.result.content[0].text).toContain("invalid result");
    expect(ends.h.isError).toBe(false);
    expect(ends.h.result.content[0].text).toMatch(/\[… output cut: \d+ more characters not shown\]$/);
    expect(ends.f.isError).toBe(false);
    expect(ends.f.result.content[0].text).toMatch(/\[… output cut: \d+ more (bytes|characters) not shown\]$/);
    const updates = eventsOf(r, "toolExecutionUpdate").filter((e) => e.toolCallId === "f");
    expect(updates.at(-1)!.partialResult.content[0].text).toMatch(/^\[… stderr cut: \d+ more bytes not shown\]$/);
    // stderr stays proportionate: a few MB of events, not 100 MB.
    expect(r.stderr.length).toBeLessThan(8 * 1024 * 1024);
    const sent = server.requests[1].messages.filter((m: { role: string }) => m.role === "tool");
    expect(sent.map((m: { tool_call_id: string }) => m.tool_call_id)).toEqual(["b", "s", "h", "f"]);
    expect(JSON.stringify(server.requests[1]).length).toBeLessThan(4 * MAX_RESULT_CHARS);
  });

  /** A folder `name` holding tool files (file name → source). */
  function toolFolder(name: string, files: Record<string, string>): string {
    const folder = join(dir, name);
    mkdirSync(folder, { recursive: true });
    for (const [file, source] of Object.entries(files)) writeFileSync(join(folder, file), source);
    return folder;
  }
  const tool = (name: string, execute: string) =>
    `export default { name: ${JSON.stringify(name)}, label: "t", description: "d", inputSchema: { type: "object" }, ${execute} };\n`;

  // Tools that try to escape the run (test/e2e/escapes.test.ts has the cases that need a real process).
  it("process.exit(0) in a tool: the call gets an error result, the run goes on and answers", async () => {
    const tools = toolFolder("exit-call", { "quit.ts": tool("quit", "execute: async () => { process.exit(0); return 'unreachable'; }") });
    server = await startChatServer([reply.json({ toolCalls: [call("q", "quit")] }), reply.json({ content: "answered anyway" })]);
    const spec = writeSpec(dir, "exit-call", { toolDirs: [tools] });
    const r = await yiem(["run", "-c", spec, "hi"], { server });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    expect(r.stdout).toBe("answered anyway\n");
    const [result] = eventsOf(r, "toolExecutionEnd");
    expect(result.isError).toBe(true);
    expect(result.result.content[0].text).toMatch(/Tool "quit" failed: tool or hook code called process\.exit\(0\)/);
  });

  it("an Error whose message getter throws: the call still gets an error result, and the run goes on", async () => {
    const tools = toolFolder("getter", {
      "getter.ts": tool("getter", "execute: async () => { class Nasty extends Error { get message(): string { throw new Error('getter'); } } throw new Nasty(); }"),
    });
    server = await startChatServer([reply.json({ toolCalls: [call("g", "getter")] }), reply.json({ content: "fine" })]);
    const spec = writeSpec(dir, "getter", { toolDirs: [tools] });
    const r = await yiem(["run", "-c", spec, "hi"], { server });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    const [result] = eventsOf(r, "toolExecutionEnd");
    expect(result.isError).toBe(true);
    expect(result.result.content[0].text).toBe('Tool "getter" failed: a thrown Nasty (its message could not be read)');
  });
});
