/**
 * The check pass of a big input as the built CLI runs it (docs/batch.md, "Bad lines, and the
 * check pass"): past the first 32 MiB (at most 100,000 lines) only ids are read, by the
 * WebAssembly module that stages them itself, and an input more than 128 MiB past them is shared
 * with the worker thread (dist/bundle/scan-worker.cjs). Repeated ids are found wherever the two
 * lines lie (the part checked whole, this thread's ids-only part, the worker's range) and are
 * reported in line order before any request is sent.
 */
import { createReadStream, createWriteStream, statSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { once } from "node:events";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startChatServer } from "../support/chat-server.js";
import { parseNdjson, runCli } from "../support/cli.js";
import { itemReply, useBatchProject } from "../support/batch.js";
import { FULL_CHECK_BYTES, ID_RANGE_BYTES, idRanges, partitionsFor } from "../../src/batch/range-plan.js";
import type { RangeScan } from "../../src/batch/range-worker.js";

const project = useBatchProject();

/** A preload (NODE_OPTIONS=--require) that appends each worker thread the main thread starts to $WORKER_LOG: its file and the stack that started it. */
const LOG_WORKERS = `const threads = require("node:worker_threads");
if (threads.isMainThread) {
  const Worker = threads.Worker;
  threads.Worker = class extends Worker {
    constructor(file, options) {
      super(file, options);
      require("node:fs").appendFileSync(process.env.WORKER_LOG, JSON.stringify({ file: String(file), stack: new Error().stack }) + "\\n");
    }
  };
}
`;

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
    const lines = 1_780_000; // ~170 MiB: the worker takes the bytes past ~74.5 MiB (line ~770,000 on)
    const repeats = new Map([
      [50_000, 10], // in the part checked whole
      [300_000, 200_000], // both in this thread's ids-only part
      [1_700_000, 250_000], // the worker's range repeats this thread's ids-only part
      [1_750_000, 20], // ... and the part checked whole
      [1_779_990, 1_000_000], // both in the worker's range
    ]);
    const input = join(project.dir, "big.jsonl");
    await writeInput(input, lines, repeats);
    // A preload logs every worker thread the CLI starts, with the stack that started it.
    const workerLog = join(project.dir, "workers.ndjson");
    await writeFile(join(project.dir, "log-workers.cjs"), LOG_WORKERS);
    const result = await runCli(["batch", input, "-o", join(project.dir, "big-results.jsonl")], {
      cwd: project.dir,
      env: { TEST_BASE_URL: project.server.url, TEST_API_KEY: "sk-split", NODE_OPTIONS: `--require ${join(project.dir, "log-workers.cjs")}`, WORKER_LOG: workerLog },
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
    // One scan worker, started by bin/yiem.js before the CLI bundle loaded (src/cli/early-scan.ts),
    // and used by the check: a scan the batch command did not take, or the check did not fit, would
    // have been replaced by a second one started from dist/bundle/yiem.cjs.
    const scanWorkers = (await readFile(workerLog, "utf8")).trim().split("\n").map((line) => JSON.parse(line) as { file: string; stack: string }).filter((w) => w.file.endsWith("scan-worker.cjs"));
    expect(scanWorkers).toHaveLength(1);
    expect(scanWorkers[0]!.stack).toContain("bin/yiem.js");
    expect(scanWorkers[0]!.stack).not.toContain("yiem.cjs");
  }, 90_000);
});

/** The `\n`s of `file` from byte `start` on. */
async function newlinesFrom(file: string, start: number): Promise<number> {
  let count = 0;
  for await (const chunk of createReadStream(file, { start }) as AsyncIterable<Buffer>) for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) count++;
  return count;
}

describe("the check pass's worker started before the CLI loads (src/cli/early-scan.ts, in the built start bundle)", () => {
  it("scans the range the check pass plans of the input a plain batch line names; a scan for another file is not taken", async () => {
    const input = join(project.dir, "early.jsonl");
    await writeInput(input, 1_780_000, new Map());
    const start = createRequire(import.meta.url)("../../dist/bundle/start.cjs") as {
      startEarlyRangeScans(args: string[], cwd: string): void;
      takeEarlyRangeScans(file: string | undefined): RangeScan[] | undefined;
    };
    const args = ["batch", "-c", "agent.config.yaml", "early.jsonl", "-o", "out.jsonl"];
    start.startEarlyRangeScans(args, project.dir);
    expect(start.takeEarlyRangeScans(join(project.dir, "other.jsonl"))).toBeUndefined();
    expect(start.takeEarlyRangeScans(input)).toBeUndefined(); // cancelled with the first take
    start.startEarlyRangeScans(args, project.dir);
    const scans = start.takeEarlyRangeScans(input);
    const size = statSync(input).size;
    const planned = idRanges(input, FULL_CHECK_BYTES, size, ID_RANGE_BYTES);
    expect(planned).toHaveLength(1);
    expect(scans?.map(({ file, range, partitions }) => ({ file, range, partitions }))).toEqual([{ file: input, range: planned[0], partitions: partitionsFor(size) }]);
    const result = await scans![0]!.result;
    const lines = await newlinesFrom(input, planned[0]!.start);
    expect(result).toMatchObject({ lines, good: lines, total: lines, badLines: [] });
    expect(result.staged.parts.reduce((sum, words) => sum + words.length / 2, 0)).toBe(lines);
  }, 90_000);
});
