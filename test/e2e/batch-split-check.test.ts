/**
 * The check pass of a big input as the built CLI runs it (docs/batch.md, "Bad lines, and the
 * check pass"): past the first 32 MiB (at most 100,000 lines) only ids are read, by the
 * WebAssembly module that stages them itself, and an input more than 128 MiB past them is shared
 * with the worker thread (dist/bundle/scan-worker.cjs). Repeated ids are found wherever the two
 * lines lie (the part checked whole, this thread's ids-only part, the worker's range) and are
 * reported in line order before any request is sent.
 */
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startChatServer } from "../support/chat-server.js";
import { parseNdjson, runCli } from "../support/cli.js";
import { itemReply, useBatchProject } from "../support/batch.js";

const project = useBatchProject();

/** Writes `lines` lines of ~100 bytes, line k's id `row-k` unless `repeats` maps k to another line whose id it repeats. */
async function writeInput(file: string, lines: number, repeats: Map<number, number>): Promise<void> {
  const out = createWriteStream(file);
  const prompt = "summarise the log of service checkout-api for 2026-12-01, errors first";
  let chunk: string[] = [];
  for (let k = 1; k <= lines; k++) {
    chunk.push(`{"id":"row-${repeats.get(k) ?? k}","prompt":"${prompt}"}\n`);
    if (chunk.length === 10_000 || k === lines) {
      if (!out.write(chunk.join(""))) await once(out, "drain");
      chunk = [];
    }
  }
  out.end();
  await once(out, "finish");
}

describe("the check pass of a 170 MiB input (two threads, ids staged by the module)", () => {
  it("finds every repeated id, within and across the threads' parts, in line order, before any request", async () => {
    let requests = 0;
    project.server = await startChatServer((request) => {
      requests++;
      return itemReply(request);
    });
    const lines = 1_780_000; // ~170 MiB: the worker takes the bytes past ~88 MiB (line ~900,000 on)
    const repeats = new Map([
      [50_000, 10], // in the part checked whole
      [300_000, 200_000], // both in this thread's ids-only part
      [1_700_000, 250_000], // the worker's range repeats this thread's ids-only part
      [1_750_000, 20], // ... and the part checked whole
      [1_779_990, 1_000_000], // both in the worker's range
    ]);
    const input = join(project.dir, "big.jsonl");
    await writeInput(input, lines, repeats);
    const result = await runCli(["batch", input, "-o", join(project.dir, "big-results.jsonl")], {
      cwd: project.dir,
      env: { TEST_BASE_URL: project.server.url, TEST_API_KEY: "sk-split" },
      timeoutMs: 60_000,
    });
    expect(result.code, result.stderr).toBe(2);
    expect(requests).toBe(0);
    const events = parseNdjson(result.stderr);
    const end = events.find((e) => e.type === "batchEnd");
    expect(end).toMatchObject({ total: 0, exitCode: 2 });
    const failure = String(end!.failure);
    expect(failure).toContain("5 bad lines, so nothing ran");
    const named = [...failure.matchAll(/line (\d+): the id "([^"]+)" is used by an earlier line too/g)].map((m) => [Number(m[1]), m[2]]);
    expect(named).toEqual([...repeats].map(([line, owner]) => [line, `row-${owner}`]));
  }, 90_000);
});
