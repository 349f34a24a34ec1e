/**
 * `yiem batch` as a real process under kills: SIGKILL at about half way, then
 * `--resume`: every id exactly once, no torn line, the killed items run again and the finished
 * ones do not. SIGTERM: no new item starts, running ones past the grace are recorded aborted,
 * exit 143, and `--resume` runs them again (their aborted lines replaced).
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { startChatServer } from "../support/chat-server.js";
import { baseEnv, parseNdjson, runCli, yiemBin } from "../support/cli.js";
import { assertBatchStream, assertEventsValid, itemReply, objectLines, promptOf, useBatchProject } from "../support/batch.js";

const project = useBatchProject();

const env = () => ({ TEST_BASE_URL: project.server!.url, TEST_API_KEY: "sk-kill" });

/** The complete lines of the results file, parsed; and whether a torn last line was there. */
function resultsOf(file: string): { results: Array<Record<string, any>>; torn: boolean } {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return { results: [], torn: false };
  }
  const torn = text !== "" && !text.endsWith("\n");
  const lines = text.split("\n");
  if (torn) lines.pop();
  return { results: lines.filter((l) => l !== "").map((l) => JSON.parse(l)), torn };
}

/** Spawns `yiem batch …` and resolves once `ready(file)` holds, with the child. */
function spawnBatch(args: string[]) {
  const child = spawn(process.execPath, [yiemBin, "batch", ...args], { cwd: project.dir, env: baseEnv(env()), stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
  return { child, exited, stderr: () => stderr };
}

async function until(check: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await sleep(20);
  }
}

describe("yiem batch killed", () => {
  it("SIGKILL at about half way, then --resume: every id exactly once, no torn line, only the unfinished items run again", async () => {
    const N = 60;
    project.server = await startChatServer(async (request) => {
      await sleep(15 + (promptOf(request).length % 5) * 5);
      return itemReply(request);
    });
    writeFileSync(join(project.dir, "kill.jsonl"), objectLines(N, 1));
    const file = join(project.dir, "kill-results.jsonl");
    const run = spawnBatch(["kill.jsonl", "-o", file, "-j", "4"]);
    await until(() => resultsOf(file).results.length >= N / 2);
    run.child.kill("SIGKILL");
    expect((await run.exited).signal).toBe("SIGKILL");
    const before = resultsOf(file).results;
    expect(before.length).toBeGreaterThanOrEqual(N / 2);
    expect(before.length).toBeLessThan(N);
    const requestsBefore = project.server.received.length;

    const resumed = await runCli(["batch", "kill.jsonl", "-o", file, "-j", "4", "--resume"], { cwd: project.dir, env: env(), timeoutMs: 60_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    const { results, torn } = resultsOf(file);
    expect(torn).toBe(false);
    const ids = results.map((r) => r.id);
    expect(ids.length).toBe(N);
    expect(new Set(ids).size).toBe(N);
    expect(results.every((r) => r.status === "ok")).toBe(true);
    // The finished items kept their lines (same runs); the others ran in the resumed batch.
    const beforeById = new Map(before.map((r) => [r.id, r.runId]));
    for (const r of results) if (beforeById.has(r.id)) expect(r.runId).toBe(beforeById.get(r.id));
    const rerunPrompts = new Set(project.server.received.slice(requestsBefore).map(promptOf));
    for (let i = 0; i < N; i++) {
      const id = `item-${i}`;
      expect(rerunPrompts.has(`question ${i} [tools:1]`)).toBe(!beforeById.has(id));
    }
    const batchEvents = resumed.events.filter((e) => !("itemId" in e));
    assertBatchStream(batchEvents);
    expect(batchEvents[0]).toMatchObject({ type: "batchStart", total: N, skipped: before.length, resumed: true });
    expect(batchEvents.at(-1)).toMatchObject({ type: "batchEnd", total: N, ok: N - before.length, skipped: before.length, exitCode: 0 });
  });

  it("SIGTERM: no new item starts, running items past the grace are recorded aborted, exit 143; --resume runs them again", async () => {
    project.server = await startChatServer(async (request) => {
      // Items 0 and 1 answer at once; the rest take long enough to be caught by the signal.
      await sleep(/question [01]$/.test(promptOf(request)) ? 0 : 3000);
      return itemReply(request);
    });
    writeFileSync(join(project.dir, "term.jsonl"), objectLines(10));
    const file = join(project.dir, "term-results.jsonl");
    const run = spawnBatch(["term.jsonl", "-o", file, "-j", "3", "--grace", "200ms"]);
    await until(() => resultsOf(file).results.length >= 2 && project.server!.received.length >= 3);
    run.child.kill("SIGTERM");
    const exit = await run.exited;
    expect(exit.code, run.stderr()).toBe(143);
    const { results } = resultsOf(file);
    const aborted = results.filter((r) => r.status === "aborted");
    expect(aborted.length).toBeGreaterThanOrEqual(1);
    for (const r of aborted) {
      expect(r.stopReason).toBe("aborted");
      expect(r.error).toContain("the batch was stopped by SIGTERM and this item did not finish within the 200 ms grace");
    }
    // No item started after the signal: at most concurrency (3) were running.
    expect(results.length).toBeLessThanOrEqual(5);
    const events = parseNdjson(run.stderr());
    assertBatchStream(events);
    expect(events.at(-1)).toMatchObject({ type: "batchEnd", exitCode: 143, aborted: aborted.length });
    expect(Number(events.at(-1)!.notRun)).toBe(10 - results.length);

    await project.server.close();
    project.server = await startChatServer((request) => itemReply(request));
    const resumed = await runCli(["batch", "term.jsonl", "-o", file, "--resume"], { cwd: project.dir, env: env(), timeoutMs: 60_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    const after = resultsOf(file).results;
    expect(after.map((r) => r.id).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `item-${i}`).sort());
    expect(after.every((r) => r.status === "ok")).toBe(true);
    expect(resumed.events.find((e) => e.type === "warning")!.message).toContain(`${aborted.length} result${aborted.length === 1 ? "" : "s"} without a final status (aborted) removed`);
  });

  it("SIGTERM while stdin is still open: the copy stops at once, nothing starts, exit 143, and batchEnd says the items were not counted", async () => {
    project.server = await startChatServer((request) => itemReply(request));
    const file = join(project.dir, "stdin-term-results.jsonl");
    const child = spawn(process.execPath, [yiemBin, "batch", "-", "-o", file], { cwd: project.dir, env: baseEnv(env()), stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    // One item, and a producer that keeps the pipe open.
    child.stdin!.write('{"id":"a","prompt":"x"}\n');
    await sleep(1500);
    const signalledAt = Date.now();
    child.kill("SIGTERM");
    expect(await exited, stderr).toBe(143);
    // Not held until stdin closes (it never does here).
    expect(Date.now() - signalledAt).toBeLessThan(10_000);
    child.stdin!.destroy();
    expect(project.server.received).toHaveLength(0);
    const events = parseNdjson(stderr);
    expect(events.at(-1)).toMatchObject({ type: "batchEnd", exitCode: 143, total: null, notRun: null, ok: 0 });
    assertEventsValid(events);
  });
});
