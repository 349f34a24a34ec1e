/**
 * Through the CLI, in-process: tool and hook code that tries to escape the run (moved from
 * test/e2e/escapes, which keeps what only a real process shows: the watchdog, exit listeners, a
 * stalled stderr reader, throws and rejections nobody handles):
 * - process.exit in a tool and an Error whose message getter throws give the call an error result,
 *   and the run goes on.
 * Console output of tools stays spawned too: in a test worker, `console` does not write through
 * `process.stdout`, so the channel guard would not see it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../../support/chat-server.js";
import { eventsOf, expectRunEnded, writeSpec, yiem } from "../../fixtures/battery/harness.js";

let dir: string;
let server: ChatServer | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "yiem-tool-escapes-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const call = (id: string, name: string, args: object = {}) => ({ id, name, arguments: JSON.stringify(args) });

/** A folder `name` holding tool files (file name → source). */
function toolFolder(name: string, files: Record<string, string>): string {
  const folder = join(dir, name);
  mkdirSync(folder, { recursive: true });
  for (const [file, source] of Object.entries(files)) writeFileSync(join(folder, file), source);
  return folder;
}

const tool = (name: string, execute: string) =>
  `export default { name: ${JSON.stringify(name)}, label: "t", description: "d", inputSchema: { type: "object" }, ${execute} };\n`;

describe("tools that try to escape the run", () => {
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
