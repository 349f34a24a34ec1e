/**
 * `yiem batch` on an input over the check pass's full part (32 MiB, src/batch/check-pass.ts
 * FULL_CHECK_BYTES), through the CLI (in-process): past it the check reads ids only, so a
 * repeated id there is still exit 2 before anything runs, while a line that is bad for another
 * reason becomes its item's error result (with a note saying so); `--full-check` checks every
 * line whole first. The first lines are big plain-text prompts (9 MB each, ids 1…4) and already
 * done (--resume), so the test runs only the lines past the full part. The full part also ends
 * after FULL_CHECK_LINES lines (short ones, the same way).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startChatServer } from "../support/chat-server.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import type { CliResult } from "../support/cli.js";
import { assertBatchStream, useBatchProject, itemReply, readResults } from "../support/batch.js";
import { FULL_CHECK_BYTES, FULL_CHECK_LINES } from "../../src/batch/check-pass.js";
import { shardOf } from "../../src/batch/shard.js";

const PAD_LINES = 4;
/** Each case reads and writes ~35 MB through the whole CLI a few times: slow on a loaded machine. */
const CASE_TIMEOUT_MS = 180_000;
const PAD_PROMPT = "x".repeat(9 * 1024 * 1024);

const fixture = useBatchProject();

let n = 0;
/** An input of the big done lines then `tail`, and a results file holding the done lines; their paths. */
async function bigInput(tail: string[]): Promise<{ input: string; results: string }> {
  const pad = Array.from({ length: PAD_LINES }, () => PAD_PROMPT);
  const input = join(fixture.dir, `big-${++n}.jsonl`);
  await writeFile(input, `${[...pad, ...tail].join("\n")}\n`);
  const done = Array.from({ length: PAD_LINES }, (_, i) => JSON.stringify({ id: String(i + 1), runId: "r", status: "ok", stopReason: "completed", text: "", usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, durationMs: 0 }));
  const results = join(fixture.dir, `big-${n}.results.jsonl`);
  await writeFile(results, `${done.join("\n")}\n`);
  return { input, results };
}

async function batch(args: string[]): Promise<CliResult> {
  return runCliInProcess(["batch", ...args, "--resume"], { cwd: fixture.dir, env: { TEST_BASE_URL: fixture.server?.url ?? "http://127.0.0.1:9/v1", TEST_API_KEY: "sk-batch-secret" }, timeoutMs: 120_000 });
}

describe("yiem batch on an input over the check pass's full part", () => {
  it("the input really goes past the full part", () => {
    expect(PAD_LINES * PAD_PROMPT.length).toBeGreaterThan(FULL_CHECK_BYTES);
  });

  it("still refuses a repeated id past it before anything runs (exit 2, naming the line)", async () => {
    fixture.server = await startChatServer((request) => itemReply(request));
    const { input, results } = await bigInput([JSON.stringify({ id: "b", prompt: "one" }), JSON.stringify({ id: "b", prompt: "two" })]);
    const r = await batch([input, "-o", results, "--events", "none"]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('1 bad line, so nothing ran');
    expect(r.stderr).toContain(`line ${PAD_LINES + 2}: the id "b" is used by an earlier line too: ids must be unique`);
    expect(fixture.server.received).toHaveLength(0);
  }, CASE_TIMEOUT_MS);

  it("turns a line that is bad past it for another reason into its error result, says so; --full-check refuses it before anything runs", async () => {
    fixture.server = await startChatServer((request) => itemReply(request));
    const tail = [JSON.stringify({ id: "a", prompt: "x", promt: "typo" }), JSON.stringify({ id: "b", prompt: "fine" })];
    const first = await bigInput(tail);
    const r = await batch([first.input, "-o", first.results, "--events", "pretty"]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`lines from ${PAD_LINES} on were checked for their ids only`);
    const results = await readResults(first.results);
    expect(results.slice(PAD_LINES).map((x) => [x.id, x.status])).toEqual(expect.arrayContaining([[`line:${PAD_LINES + 1}`, "error"], ["b", "ok"]]));
    expect(results.find((x) => x.id === `line:${PAD_LINES + 1}`)!.error).toContain('unknown key "promt"');
    expect(fixture.server.received.length).toBeGreaterThan(0);

    const received = fixture.server.received.length;
    const second = await bigInput(tail);
    const full = await batch([second.input, "-o", second.results, "--events", "none", "--full-check"]);
    expect(full.code, full.stderr).toBe(2);
    expect(full.stderr).toContain(`line ${PAD_LINES + 1} (id "a"): unknown key "promt"`);
    expect(fixture.server.received.length).toBe(received);
  }, CASE_TIMEOUT_MS);

  it("ends the full part after FULL_CHECK_LINES short lines too; --full-check checks past them", async () => {
    fixture.server = await startChatServer((request) => itemReply(request));
    const done = Array.from({ length: FULL_CHECK_LINES }, () => "p");
    const input = join(fixture.dir, `lines-${++n}.jsonl`);
    await writeFile(input, `${[...done, JSON.stringify({ id: "a", prompt: "x", promt: "typo" }), JSON.stringify({ id: "b", prompt: "fine" })].join("\n")}\n`);
    const ledger = done.map((_, i) => JSON.stringify({ id: String(i + 1), runId: "r", status: "ok", stopReason: "completed", text: "", usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, durationMs: 0 })).join("\n");
    const results = join(fixture.dir, `lines-${n}.results.jsonl`);
    await writeFile(results, `${ledger}\n`);
    const r = await batch([input, "-o", results, "--events", "pretty"]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`lines from ${FULL_CHECK_LINES + 1} on were checked for their ids only (the input is over 32 MiB or 100,000 lines)`);
    const after = (await readResults(results)).slice(FULL_CHECK_LINES).map((x) => [x.id, x.status]);
    expect(after).toEqual(expect.arrayContaining([[`line:${FULL_CHECK_LINES + 1}`, "error"], ["b", "ok"]]));

    await writeFile(results, `${ledger}\n`);
    const received = fixture.server.received.length;
    const full = await batch([input, "-o", results, "--events", "none", "--full-check"]);
    expect(full.code, full.stderr).toBe(2);
    expect(full.stderr).toContain(`line ${FULL_CHECK_LINES + 1} (id "a"): unknown key "promt"`);
    expect(fixture.server.received.length).toBe(received);
  }, CASE_TIMEOUT_MS);

  it("under --shard, counts a line past it whose JSON is broken after a readable id in that id's shard: each shard's total is exact, and one shard records the line", async () => {
    fixture.server = await startChatServer((request) => itemReply(request));
    const good = Array.from({ length: 6 }, (_, i) => JSON.stringify({ id: `good-${i}`, prompt: `g${i}` }));
    const brokenLine = (i: number) => PAD_LINES + 4 + i;
    // Each broken line's id is in the other shard than its line:N, so that sharding it by line:N would count it in one shard and record it in the other.
    const brokenIds = Array.from({ length: 8 }, (_, i) => {
      let k = 0;
      while (shardOf(`broken-${i}-${k}`, 2) === shardOf(`line:${brokenLine(i)}`, 2)) k++;
      return `broken-${i}-${k}`;
    });
    const broken = brokenIds.map((id) => `{"id":"${id}","prompt":"x"`);
    const tail = [...good.slice(0, 3), ...broken, ...good.slice(3)];
    const recorded: string[] = [];
    for (const shard of [1, 2]) {
      const { input, results } = await bigInput(tail);
      const r = await batch([input, "-o", results, "--shard", `${shard}/2`]);
      expect([0, 1], r.stderr).toContain(r.code);
      assertBatchStream(r.events);
      const start = r.events[0] as unknown as { total: number; skipped: number };
      const end = r.events.at(-1) as unknown as { total: number; ok: number; error: number; skipped: number; notRun: number };
      const mine = brokenIds.filter((id) => shardOf(id, 2) === shard).length + good.filter((_, i) => shardOf(`good-${i}`, 2) === shard).length;
      const padMine = Array.from({ length: PAD_LINES }, (_, i) => String(i + 1)).filter((id) => shardOf(id, 2) === shard).length;
      expect(start).toMatchObject({ total: mine + padMine, skipped: padMine });
      expect(end).toMatchObject({ total: mine + padMine, skipped: padMine, notRun: 0 });
      expect(end.ok + end.error).toBe(mine);
      recorded.push(...(await readResults(results)).slice(PAD_LINES).map((x) => x.id));
    }
    expect(recorded.sort()).toEqual([...good.map((_, i) => `good-${i}`), ...broken.map((_, i) => `line:${brokenLine(i)}`)].sort());
  }, CASE_TIMEOUT_MS);
});
