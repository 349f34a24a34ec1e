/**
 * Hardening: how a `yiem run` ends when something other than the loop stops it, where only a real
 * process shows it (the in-process cases are in test/cli/run.test.ts):
 * - item 2: an event loop that runs dry (a module's top-level await that never settles, an import
 *   cycle through `await import()`, a tool awaiting an event that never fires with no timeout):
 *   agentEnd error and exit 1, never a silent exit 0 (`run` and `tools check`);
 * - item 8: `--timeout` while tools load and the first signal also while stdin is read and tools
 *   load; SIGHUP and SIGQUIT like SIGTERM; synchronous tool code that never yields is ended by the
 *   run timeout;
 * - item 9: a failed write of the answer (stdout on a full disk) is named in the one agentEnd, and
 *   the session file is still written.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, baseEnv, parseNdjson, repoRoot, runCli, yiemBin } from "../support/cli.js";
import { expectGroupGone } from "../support/processes.js";
import { batteryEnv, BATTERY_TOOLS, eventsOf, expectRunEnded, reportedPid, signalWhen, signalWhenReady, writeSpec, yiemSpawned as yiem } from "../fixtures/battery/harness.js";

const FIXTURES = join(repoRoot, "test", "fixtures", "hardening");
const tools = (name: string) => join(FIXTURES, `${name}-tools`);
const REPLAY = join(repoRoot, "test", "fixtures", "review.replay.jsonl");

let dir: string;
let server: ChatServer | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "yiem-hardening-lifecycle-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const call = (id: string, name: string, args: object = {}) => ({ id, name, arguments: JSON.stringify(args) });

/** Polls until `ready()` holds (or fails after `ms`). */
async function until(ready: () => boolean, ms = 15_000): Promise<void> {
  const started = Date.now();
  while (!ready()) {
    if (Date.now() - started > ms) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** True once the process catches SIGHUP: yiem's handlers are installed (Node itself never catches it). */
function handlersInstalled(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const caught = /SigCgt:\s*([0-9a-f]+)/.exec(status)?.[1];
    return caught !== undefined && (BigInt(`0x${caught}`) & 1n) === 1n;
  } catch {
    return false;
  }
}

/** An onSpawn that sends `signal` `afterMs` after yiem's handlers are installed and `ready()` holds. */
function signalOnceReady(signal: NodeJS.Signals, ready: () => boolean = () => true, afterMs = 0) {
  return (child: ChildProcess) => {
    void until(() => handlersInstalled(child.pid!) && ready()).then(() => setTimeout(() => child.kill(signal), afterMs), () => {});
  };
}

describe("an event loop that runs dry ends the command with an error, never exit 0", () => {
  for (const [name, folder] of [["a tool module's top-level await never settles", "tla"], ["an import cycle through await import()", "cycle"]] as const) {
    it(`run: ${name} → agentEnd error, exit 1`, async () => {
      const r = await runCli(["run", "-m", `replay:${REPLAY}`, "--tool-dir", tools(folder), "--events", "ndjson", "hi"]);
      const end = expectRunEnded(r, { code: 1, stopReason: "error", started: false });
      expect(end.error).toMatch(/stopped before it finished.*top-level await/);
      expect(r.stdout).toBe("");
    });

    it(`tools check: ${name} → exit 1 with a message`, async () => {
      const r = await runCli(["tools", "check", "--tool-dir", tools(folder)]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/loading the tools did not finish/);
    });
  }

  it("run: a tool awaits an event that never fires (toolTimeoutMs 0) → the call gets a result, agentEnd error, exit 1", async () => {
    const spec = writeSpec(dir, "wait", { toolDirs: [tools("wait")], extra: ["limits: { toolTimeoutMs: 0 }"] });
    server = await startChatServer([reply.json({ toolCalls: [call("w", "waitForever")] }), reply.json({ content: "never asked" })]);
    const r = await yiem(["run", "-c", spec, "hi"], { server });
    const end = expectRunEnded(r, { code: 1, stopReason: "error" });
    expect(end.error).toMatch(/stopped before it finished/);
    expect(eventsOf(r, "toolExecutionEnd")).toEqual([expect.objectContaining({ toolCallId: "w", isError: true })]);
    expect(server.requests).toHaveLength(1);
  });
});

describe("signals and the run timeout before the loop starts", () => {
  const FIRST_SIGNALS = { SIGINT: 130, SIGTERM: 143 } as const;
  for (const [signal, code] of Object.entries(FIRST_SIGNALS) as Array<[NodeJS.Signals, number]>) {
    it(`${signal} while a tool module loads: lone agentEnd aborted, exit ${code}`, async () => {
      const marker = join(dir, `loading-${signal}`);
      const spec = writeSpec(dir, `slow-${signal}`, { toolDirs: [tools("slow-load")] });
      const started = Date.now();
      const r = await yiem(["run", "-c", spec, "hi"], { env: { HARDENING_MARKER: marker }, onSpawn: signalOnceReady(signal, () => existsSync(marker)) });
      expectRunEnded(r, { code, stopReason: "aborted", started: false });
      expect(r.stdout).toBe("");
      // Ended by the signal, not by the module finishing its slow load.
      expect(Date.now() - started).toBeLessThan(8_000);
    });

    it(`${signal} while stdin is read (no prompt, stdin never closes): lone agentEnd aborted, exit ${code}`, async () => {
      const spec = writeSpec(dir, `stdin-${signal}`);
      const r = await yiem(["run", "-c", spec], { stdin: "open", onSpawn: signalOnceReady(signal, () => true, 300) });
      expectRunEnded(r, { code, stopReason: "aborted", started: false });
      expect(r.stdout).toBe("");
    });
  }

  it("--timeout while a tool module loads: agentEnd timeout, exit 3", async () => {
    const spec = writeSpec(dir, "slow-timeout", { toolDirs: [tools("slow-load")] });
    const started = Date.now();
    const r = await yiem(["run", "-c", spec, "--timeout", "1s", "hi"]);
    const end = expectRunEnded(r, { code: 3, stopReason: "timeout", started: false });
    expect(end.error).toBe("run timed out after 1000 ms");
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe("SIGHUP and SIGQUIT end the run like SIGTERM", () => {
  const CODES = { SIGHUP: 129, SIGQUIT: 131 } as const;
  for (const signal of ["SIGHUP", "SIGQUIT"] as const) {
    it(`${signal} while waiting on the model: agentEnd aborted, exit ${CODES[signal]}`, async () => {
      const spec = writeSpec(dir, `model-${signal}`, { model: { timeoutMs: "60s" } });
      const hung = (server = await startChatServer([reply.hang()]));
      const r = await yiem(["run", "-c", spec, "hi"], { server, onSpawn: signalWhenReady(() => hung.received.length === 1, signal) });
      expectRunEnded(r, { code: CODES[signal], stopReason: "aborted" });
    });

    it(`${signal} while a command tool with a grandchild runs: exit ${CODES[signal]}, its process group is killed`, async () => {
      const spec = writeSpec(dir, `family-${signal}`, { model: { timeoutMs: "60s" }, toolDirs: [BATTERY_TOOLS] });
      server = await startChatServer([reply.json({ toolCalls: [call("f", "family")] }), reply.hang()]);
      const r = await yiem(["run", "-c", spec, "hi"], { server, onSpawn: signalWhen('"text":"main ', [signal]) });
      expectRunEnded(r, { code: CODES[signal], stopReason: "aborted" });
      expect(eventsOf(r, "toolExecutionEnd")).toEqual([expect.objectContaining({ toolCallId: "f", isError: true })]);
      await expectGroupGone(reportedPid(r.stderr, "main"), reportedPid(r.stderr, "grandchild"));
    });
  }
});

describe("synchronous tool code that never yields is ended by the run timeout", () => {
  for (const tool of ["spin", "spinLater"]) {
    it(`${tool}: agentEnd timeout, exit 3, within a few seconds; every call has a result`, async () => {
      const spec = writeSpec(dir, `spin-${tool}`, { toolDirs: [tools("spin")] });
      server = await startChatServer([reply.json({ toolCalls: [call("s", tool), call("n", "notRun")] }), reply.json({ content: "never asked" })]);
      const started = Date.now();
      // 3 s, not 1: the model's answer must arrive and the tool start before the deadline, which
      // a loaded CI machine does not always manage within one second of start-up.
      const r = await yiem(["run", "-c", spec, "--timeout", "3s", "hi"], { server });
      const elapsed = Date.now() - started;
      const end = expectRunEnded(r, { code: 3, stopReason: "timeout" });
      expect(end.error).toMatch(/^run timed out after 3000 ms: synchronous code/);
      expect(end).toMatchObject({ turns: 1, toolCalls: 2 });
      expect(eventsOf(r, "toolExecutionEnd")).toEqual([expect.objectContaining({ toolCallId: "s", toolName: tool, isError: true })]);
      expect(eventsOf(r, "toolCallRejected").map((e) => e.toolCallId)).toEqual(["n"]);
      expect(eventsOf(r, "turnEnd")).toEqual([expect.objectContaining({ turn: 1, toolResults: 2 })]);
      expect(r.stdout).toBe("");
      expect(elapsed).toBeLessThan(15_000);
    });
  }
});

describe("a tool module whose top level never yields", () => {
  it("is ended by the run timeout too: lone agentEnd timeout, exit 3", async () => {
    const spec = writeSpec(dir, "spin-load", { toolDirs: [tools("spin-load")] });
    const started = Date.now();
    const r = await yiem(["run", "-c", spec, "--timeout", "1s", "hi"]);
    const end = expectRunEnded(r, { code: 3, stopReason: "timeout", started: false });
    expect(end.error).toMatch(/synchronous code of a tool or hook did not yield/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

/** Runs yiem with stdout on `stdoutFd` (e.g. /dev/full); stderr is collected. */
function runWithStdout(args: string[], stdoutFd: number, env: Record<string, string | undefined>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [yiemBin, ...args], { cwd: repoRoot, env: baseEnv(env), stdio: ["ignore", stdoutFd, "pipe"] });
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe("failed writes after the run are named in the one agentEnd", () => {
  it("stdout on a full disk (/dev/full): exit 1, one agentEnd naming stdout, and the session file is still written", async () => {
    const session = join(dir, "full-disk-session.json");
    const fd = openSync("/dev/full", "w");
    let r: { code: number | null; stderr: string };
    try {
      r = await runWithStdout(["run", "-m", `replay:${REPLAY}`, "--events", "ndjson", "--session", session, "review this"], fd, batteryEnv());
    } finally {
      closeSync(fd);
    }
    const events = parseNdjson(r.stderr);
    assertEventStream(events);
    const end = events.at(-1)!;
    expect(end).toMatchObject({ type: "agentEnd", stopReason: "error" });
    expect(String(end.error)).toMatch(/could not write the answer to stdout: .*ENOSPC/);
    expect(r.code).toBe(1);
    expect(JSON.parse(readFileSync(session, "utf8")).messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
  });
});
