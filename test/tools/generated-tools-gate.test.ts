/**
 * `beforeToolCall` runs before any model-written code of a generated tool. A
 * tool written by writeTool (this run, or an earlier one: a file of writeToolDir) has its
 * prepareCode and validateCode run only after the hook allowed the call, so a blocking hook
 * means none of its code ran.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { eventsOf, expectRunEnded, writeSpec, yiem } from "../fixtures/battery/harness.js";

const dir = mkdtempSync(join(tmpdir(), "yiem-generated-gate-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const call = (id: string, name: string, args: object = {}) => ({ id, name, arguments: JSON.stringify(args) });
const mark = (file: string) => `const fs = await import("node:fs"); fs.writeFileSync(${JSON.stringify(file)}, "ran");`;

describe("a blocking beforeToolCall hook means no model-written code ran", () => {
  it("writeTool's prepareCode and validateCode never run when the hook blocks the generated tool, in this run and the next", async () => {
    const project = join(dir, "p");
    mkdirSync(project);
    const markers = { prepare: join(dir, "PREPARE"), validate: join(dir, "VALIDATE"), execute: join(dir, "EXECUTE") };
    const hook = join(project, "gate.ts");
    writeFileSync(hook, [
      "export default {",
      "  beforeToolCall({ toolCall, args }: { toolCall: { name: string }; args: Record<string, unknown> }) {",
      "    if (toolCall.name === 'gen') return { block: true, reason: `generated tools are gated (saw ${JSON.stringify(args)})` };",
      "  },",
      "};",
      "",
    ].join("\n"));
    const draft = {
      name: "gen", label: "Gen", description: "model-written", inputSchema: { type: "object" },
      prepareCode: `${mark(markers.prepare)} return args;`,
      validateCode: `${mark(markers.validate)} return undefined;`,
      executeCode: `${mark(markers.execute)} return "x";`,
    };
    server = await startChatServer([
      reply.json({ toolCalls: [call("w", "writeTool", draft)] }),
      reply.json({ toolCalls: [call("g", "gen", { raw: 1 })] }),
      reply.json({ content: "gated" }),
      // The next run: the tool is loaded from generated-tools/ at start-up.
      reply.json({ toolCalls: [call("g2", "gen", { raw: 2 })] }),
      reply.json({ content: "gated again" }),
    ]);
    const spec = writeSpec(project, "spec", { toolDirs: [], extra: ["builtinTools: [writeTool]", `hooks: { beforeToolCall: ${JSON.stringify(hook)} }`] });

    const first = await yiem(["run", "-c", spec, "hi"], { server });
    expectRunEnded(first, { code: 0, stopReason: "completed" });
    expect(eventsOf(first, "toolExecutionEnd").map((e) => [e.toolName, e.isError])).toEqual([["writeTool", false]]);
    expect(eventsOf(first, "toolCallRejected").map((e) => e.reason)).toEqual(['Tool call blocked: generated tools are gated (saw {"raw":1})']);
    expect(Object.values(markers).filter((m) => existsSync(m))).toEqual([]);

    const second = await yiem(["run", "-c", spec, "hi"], { server });
    expectRunEnded(second, { code: 0, stopReason: "completed" });
    expect(eventsOf(second, "toolCallRejected").map((e) => e.reason)).toEqual(['Tool call blocked: generated tools are gated (saw {"raw":2})']);
    expect(Object.values(markers).filter((m) => existsSync(m))).toEqual([]);
  });
});
