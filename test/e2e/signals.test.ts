/**
 * Battery: SIGINT and SIGTERM at each phase of a run (waiting on the model, running a TS or a
 * command tool, writing a tool file), a second SIGINT, and SIGKILL during an atomic write.
 * The first signal aborts the run: agentEnd aborted, exit 130/143, no child process left.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { defineTool, toolResult } from "../../src/tools/define.js";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { parseNdjson } from "../support/cli.js";
import { expectGroupGone } from "../support/processes.js";
import { echoTool, runScripted, toolMessages } from "../support/loop.js";
import {
  BATTERY_DIR, eventsOf, expectNoSecrets, expectRunEnded, reportedPid, signalWhen, signalWhenReady, writeSpec, yiem,
} from "../fixtures/battery/harness.js";

let dir: string;
let spec: string;
let server: ChatServer | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "yiem-battery-signals-"));
  spec = writeSpec(dir, "signals", { model: { timeoutMs: "60s" } });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const CODES = { SIGINT: 130, SIGTERM: 143 } as const;
const call = (id: string, name: string, args: object = {}) => ({ id, name, arguments: JSON.stringify(args) });

/** The family tool's main process and grandchild are gone, and so is their whole group. */
const expectFamilyGone = (stderr: string) => expectGroupGone(reportedPid(stderr, "main"), reportedPid(stderr, "grandchild"));

describe("signals during a CLI run", () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`${signal} while waiting on a hung model server: agentEnd aborted, exit ${CODES[signal]}`, async () => {
      const hung = (server = await startChatServer([reply.hang()]));
      const r = await yiem(["run", "-c", spec, "hi"], { server, onSpawn: signalWhenReady(() => hung.received.length === 1, signal) });
      const end = expectRunEnded(r, { code: CODES[signal], stopReason: "aborted" });
      expect(end.turns).toBe(1);
      expect(server.requests).toHaveLength(1);
      expect(r.stdout).toBe("");
    });

    it(`${signal} while a command tool with a grandchild runs: exit ${CODES[signal]}, no process of its group left`, async () => {
      server = await startChatServer([reply.json({ toolCalls: [call("f", "family")] }), reply.hang()]);
      const r = await yiem(["run", "-c", spec, "hi"], { server, onSpawn: signalWhen('"text":"main ', [signal]) });
      expectRunEnded(r, { code: CODES[signal], stopReason: "aborted" });
      expect(eventsOf(r, "toolExecutionEnd")).toEqual([expect.objectContaining({ toolCallId: "f", isError: true })]);
      await expectFamilyGone(r.stderr);
    });
  }

  it("a second SIGINT exits at once with 130, even while a tool ignores its abort signal", async () => {
    server = await startChatServer([reply.json({ toolCalls: [call("h", "hang"), call("f", "family")] }), reply.hang()]);
    const r = await yiem(["run", "-c", spec, "--tool-execution", "parallel", "hi"], {
      server,
      env: { YIEM_KILL_GRACE_MS: "30000" },
      onSpawn: signalWhen('"text":"main ', ["SIGINT", "SIGINT"], 5),
    });
    expect(r.signal).toBeNull();
    expect(r.code).toBe(130);
    expectNoSecrets(r.stdout, r.stderr);
    // Whatever was written is whole NDJSON lines; at most one agentEnd, and then it is last.
    const events = parseNdjson(r.stderr);
    const ends = events.filter((e) => e.type === "agentEnd");
    expect(ends.length).toBeLessThanOrEqual(1);
    if (ends.length === 1) expect(events.at(-1)).toMatchObject({ type: "agentEnd", stopReason: "aborted" });
    await expectFamilyGone(r.stderr);
  });

  it("SIGINT while writeTool writes a tool file: exit 130, and the file is either absent or whole", async () => {
    const writeDir = join(dir, "written");
    const writeSpecFile = writeSpec(dir, "write-tool", {
      model: { timeoutMs: "60s" },
      extra: ["builtinTools: [listTools, writeTool]", `writeToolDir: ${JSON.stringify(writeDir)}`],
    });
    const marker = "END-OF-GENERATED-BODY";
    const draft = {
      name: "generated",
      label: "Generated",
      description: "Written during a signal test.",
      inputSchema: { type: "object", properties: {} },
      executeCode: `${"// padding\n".repeat(5000)}return toolResult("generated works"); // ${marker}`,
    };
    server = await startChatServer([reply.json({ toolCalls: [call("w", "writeTool", draft)] }), reply.hang()]);
    const r = await yiem(["run", "-c", writeSpecFile, "write a tool"], {
      server,
      onSpawn: signalWhen((s) => /"toolExecutionStart".*"writeTool"/.test(s), ["SIGINT"]),
    });
    expectRunEnded(r, { code: 130, stopReason: "aborted" });
    const target = join(writeDir, "generated.ts");
    if (existsSync(target)) {
      const text = readFileSync(target, "utf8");
      expect(text).toContain(marker);
      expect(text.endsWith("});\n")).toBe(true);
    }
    // Only temp files of the atomic write may be left besides it (the loader skips them).
    const others = existsSync(writeDir) ? readdirSync(writeDir).filter((f) => f !== "generated.ts") : [];
    expect(others.every((f) => f.startsWith(".yiem-tmp-"))).toBe(true);
  });
});

describe("SIGKILL during an atomic write", () => {
  it("leaves the target absent, the old content or the full new content: never half a file", async () => {
    const size = 2 * 1024 * 1024;
    const target = join(dir, "atomic", "target.txt");
    for (const delayMs of [0, 4, 17]) {
      const child = spawn(process.execPath, [join(BATTERY_DIR, "scripts", "atomic-writer.mjs"), join(BATTERY_DIR, "..", "..", "..", "src"), target, String(size)], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      let armed = false;
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        out += d;
        if (armed || !out.includes("wrote 1\n")) return;
        armed = true;
        setTimeout(() => child.kill("SIGKILL"), delayMs);
      });
      const [, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on("exit", (c, s) => resolve([c, s])));
      expect(signal).toBe("SIGKILL");
      const text = readFileSync(target, "latin1");
      expect(text.length).toBe(size + "\nend X\n".length);
      const letter = text[0];
      expect(text.endsWith(`\nend ${letter}\n`)).toBe(true);
      expect(text.slice(0, size)).toBe(letter.repeat(size));
    }
  });
});

describe("abort at each phase of the loop", () => {
  it("abort while a beforeToolCall hook ignores its signal: the call is rejected, the run ends aborted", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("received SIGINT")), 30);
    const { result, ofType } = await runScripted([{ toolCalls: [call("a", "echo", { text: "x" })] }, { content: "never" }], [echoTool()], {
      signal: controller.signal,
      hooks: { beforeToolCall: () => new Promise(() => {}) },
    });
    expect(result.stopReason).toBe("aborted");
    expect(toolMessages(result.messages).map((m) => [m.toolCallId, m.isError])).toEqual([["a", true]]);
    expect(ofType("toolExecutionStart")).toHaveLength(0);
    expect(ofType("agentEnd")).toHaveLength(1);
  });

  it("abort while an afterToolCall hook ignores its signal: the call ends as an error, the run ends aborted", async () => {
    const controller = new AbortController();
    const { result, ofType } = await runScripted([{ toolCalls: [call("a", "echo", { text: "x" })] }, { content: "never" }], [echoTool()], {
      signal: controller.signal,
      hooks: {
        afterToolCall: () => {
          setTimeout(() => controller.abort(new Error("received SIGTERM")), 10);
          return new Promise(() => {});
        },
      },
    });
    expect(result.stopReason).toBe("aborted");
    expect(ofType("toolExecutionEnd")).toEqual([expect.objectContaining({ toolCallId: "a", isError: true })]);
    expect(ofType("agentEnd")).toHaveLength(1);
  });

  it("abort while prepareArguments or validateRequiredArgs hangs: the run still ends aborted", async () => {
    for (const extra of [{ prepareArguments: () => new Promise(() => {}) }, { validateRequiredArgs: () => new Promise<undefined>(() => {}) }]) {
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error("received SIGINT")), 20);
      const stuck = defineTool({ ...echoTool("stuck"), ...extra, execute: async () => toolResult("ran") });
      const { result, ofType } = await runScripted([{ toolCalls: [call("s", "stuck")] }, { content: "never" }], [stuck], { signal: controller.signal });
      expect(result.stopReason).toBe("aborted");
      expect(toolMessages(result.messages)).toHaveLength(1);
      expect(ofType("agentEnd")).toHaveLength(1);
    }
  });
});
