/**
 * Tools removed by tools.deny stay hidden from the model. Calling one answers
 * exactly as calling a name that does not exist, and writeTool with a denied tool's name does not
 * reveal where that tool's file is.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../../support/chat-server.js";
import { eventsOf, expectRunEnded, writeSpec, yiem } from "../../fixtures/battery/harness.js";

const dir = mkdtempSync(join(tmpdir(), "yiem-denied-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("denied tools stay hidden", () => {
  it("a call to a denied tool reads like a call to an unknown one; writeTool with its name does not name its file", async () => {
    const tools = join(dir, "secret-tools");
    mkdirSync(tools, { recursive: true });
    writeFileSync(join(tools, "danger.ts"), 'export default { name: "danger", label: "d", description: "d", inputSchema: { type: "object" }, execute: async () => "ran" };\n');
    const draft = { name: "danger", label: "D", description: "mine now", inputSchema: { type: "object" }, executeCode: 'return "x";', overwrite: true };
    server = await startChatServer([
      reply.json({ toolCalls: [{ id: "a", name: "danger", arguments: "{}" }, { id: "b", name: "nosuch", arguments: "{}" }] }),
      reply.json({ toolCalls: [{ id: "w", name: "writeTool", arguments: JSON.stringify(draft) }] }),
      reply.json({ content: "done" }),
    ]);
    const spec = writeSpec(dir, "denied", { toolDirs: [tools], extra: ["builtinTools: [writeTool]", 'tools: { deny: ["danger"] }', `writeToolDir: ${JSON.stringify(join(dir, "gen"))}`] });
    const r = await yiem(["run", "-c", spec, "hi"], { server });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    const [denied, unknown] = eventsOf(r, "toolCallRejected").map((e) => e.reason as string);
    expect(denied).toBe('Unknown tool "danger". Available tools: writeTool.');
    expect(unknown).toBe('Unknown tool "nosuch". Available tools: writeTool.');
    const written = eventsOf(r, "toolExecutionEnd").find((e) => e.toolName === "writeTool")!;
    expect(written.isError).toBe(true);
    const text = written.result.content[0].text as string;
    expect(text).toBe('Tool "writeTool" failed: a tool named "danger" cannot be written here; choose another name');
    expect(JSON.stringify(server.requests)).not.toContain(tools);
  });
});
