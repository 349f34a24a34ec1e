/**
 * The check pass's worker thread as built (dist/bundle/scan-worker.cjs, scripts/bundle.mjs): it
 * scans a range and posts the staged ids, or the error of a range it cannot read.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const WORKER = fileURLToPath(new URL("../../dist/bundle/scan-worker.cjs", import.meta.url));
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-scan-worker-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

function run(workerData: unknown): Promise<{ result?: { lines: number; good: number; badLines: number[]; problems: Array<{ line: number }>; numberedLines: Uint32Array }; error?: string }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData });
    worker.once("message", resolve);
    worker.once("error", reject);
  });
}

describe("scan-worker.cjs", () => {
  it("scans its range: lines numbered from the range's start, bad and plain lines by those numbers", async () => {
    const head = '{"id":"a","prompt":"p"}\n';
    const file = join(dir, "input.jsonl");
    await writeFile(file, `${head}{"id":"b","prompt":"p"}\r\n{broken\nplain\n{"id":"c"}`);
    const message = await run({ file, range: { start: head.length, end: 1e9 }, partitions: 1 });
    expect(message.result).toMatchObject({ lines: 4, good: 2, badLines: [2], problems: [{ line: 2 }] });
    expect([...message.result!.numberedLines]).toEqual([3]);
  });

  it("posts the error of a file it cannot read", async () => {
    const message = await run({ file: join(dir, "missing.jsonl"), range: { start: 0, end: 10 }, partitions: 1 });
    expect(message.error).toMatch(/ENOENT/);
  });
});
