/**
 * The check pass split into byte ranges (src/batch/range-plan.ts idRanges, id-scan.ts, staged-ids.ts
 * absorb): the same report as one scan, line numbers of the later range counted from the lines
 * before it, repeats found across ranges. Under vitest there is no worker file, so the ranges are
 * scanned in this thread (src/batch/range-scan.ts); test/e2e/scan-worker.test.ts runs the worker.
 */
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BatchSource } from "../../src/batch/runner.js";
import { checkInput } from "../../src/batch/check-pass.js";
import { idRanges, partitionsFor, scanRequest, type IdScanRequest } from "../../src/batch/range-plan.js";
import { startRangeScan, type RangeScan } from "../../src/batch/range-scan.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-check-split-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));
let n = 0;
async function file(content: string): Promise<string> {
  const path = join(dir, `input-${++n}.jsonl`);
  await writeFile(path, content);
  return path;
}

/** The report of a check with the first `full` bytes parsed whole, split into ranges of at least `range` bytes (Infinity: one scan). */
async function check(path: string, range: number, full = 64, extra: Partial<BatchSource> = {}) {
  const report = await checkInput({ file: path, done: new Map(), prepare() {}, fullCheckBytes: full, idRangeBytes: range, ...extra });
  const { index, ...rest } = report;
  return { rest, index };
}

const lines = (count: number, id = (i: number) => `item-${i}`) => Array.from({ length: count }, (_, i) => JSON.stringify({ id: id(i + 1), prompt: "p".repeat(20) }));

describe("the check pass split into ranges", () => {
  it("gives one scan's report, and the run pass's owners, for a clean input", async () => {
    const path = await file(`${lines(400).join("\n")}\n`);
    const split = await check(path, 1000);
    const whole = await check(path, Infinity);
    expect(split.rest).toEqual(whole.rest);
    expect(split.rest).toMatchObject({ total: 400, lines: 400, problemCount: 0 });
    for (const line of [1, 2, 200, 399, 400]) expect(split.index.owner(`item-${line}`, line)).toBe(line);
    expect(split.index.owner("item-401", 401)).toBe(-1);
  });

  it("finds a repeat across the two ranges, with both line numbers' ids", async () => {
    const input = lines(400);
    input[379] = input[9]!; // line 380 repeats line 10 (first range) in the second range
    const path = await file(`${input.join("\n")}\n`);
    const split = await check(path, 1000);
    expect(split.rest.problems).toEqual(['line 380: the id "item-10" is used by an earlier line too: ids must be unique']);
    expect(split.rest).toEqual((await check(path, Infinity)).rest);
    expect(split.index.owner("item-10", 380)).toBe(10);
  });

  it("names a bad line of the second range by its line number in the file", async () => {
    const input = lines(400);
    input[349] = "{not json";
    input[359] = "";
    const path = await file(`${input.join("\n")}\n`);
    const split = await check(path, 1000);
    expect(split.rest.problemCount).toBe(1);
    expect(split.rest.problems[0]).toMatch(/^line 350: /);
    expect(split.rest).toEqual((await check(path, Infinity)).rest);
    expect(split.rest.lines).toBe(399);
  });

  it("handles CRLF, a last line without a newline, plain lines and a shard the same as one scan", async () => {
    const input = lines(300).map((line, i) => (i % 7 === 3 ? `plain prompt ${i}` : line));
    const path = await file(input.join("\r\n"));
    for (const shard of [undefined, { index: 2, count: 3 }]) {
      const split = await check(path, 1000, 64, shard ? { shard } : {});
      expect(split.rest).toEqual((await check(path, Infinity, 64, shard ? { shard } : {})).rest);
      expect(split.index.owner(String(4), 4)).toBe(4);
      expect(split.index.owner("item-300", 300)).toBe(300);
      expect(split.index.owner(String(249), 249)).toBe(249); // a plain line of the second range: its id is its number in the file
    }
  });

  it("finds a plain line of the second range whose number an earlier line uses as its id", async () => {
    const input = lines(400);
    input[4] = JSON.stringify({ id: "351", prompt: "p" });
    input[350] = "plain prompt";
    const path = await file(`${input.join("\n")}\n`);
    const split = await check(path, 1000);
    expect(split.rest.problems).toEqual(['line 351: the id "351" is used by an earlier line too: ids must be unique']);
    expect(split.rest).toEqual((await check(path, Infinity)).rest);
  });

  it("does not split a file smaller than one range, nor one line without a newline", async () => {
    const small = await file(`${lines(5).join("\n")}\n`);
    expect((await check(small, 1000)).rest).toMatchObject({ total: 5, problemCount: 0 });
    const one = await file("x".repeat(5000));
    expect((await check(one, 1000)).rest).toMatchObject({ total: 1, lines: 1, problemCount: 0 });
  });
  it("stages the plain lines a range ends with past its last staged line (their marks too): no line is missing", async () => {
    const head = lines(10);
    const long = Array.from({ length: 40 }, (_, i) => JSON.stringify({ id: `long-${i}`, prompt: "x".repeat(200_000) }));
    const plain = Array.from({ length: 20_000 }, (_, i) => `plain prompt ${i}`);
    const path = await file(`${[...head, ...long, ...plain].join("\n")}\n`);
    const split = await check(path, 1 << 20);
    expect(split.rest).toMatchObject({ total: 20_050, lines: 20_050, problemCount: 0 });
    expect(split.rest).toEqual((await check(path, Infinity)).rest);
    expect(split.index.owner("20050", 20_050)).toBe(20_050);
    expect(split.index.owner("long-39", 50)).toBe(50);
  });

  it("gives the id a range's line names to that line, when a later plain line of the range repeats it", async () => {
    const input = lines(400);
    input[299] = JSON.stringify({ id: "350", prompt: "p" }); // line 300 names the id "350"
    input[349] = "hello"; // line 350 is plain: its id is its number, "350"
    const path = await file(`${input.join("\n")}\n`);
    const split = await check(path, 1000);
    expect(split.rest.problems).toEqual(['line 350: the id "350" is used by an earlier line too: ids must be unique']);
    expect(split.index.owner("350", 300)).toBe(300);
    expect(split.index.owner("350", 350)).toBe(300);
    expect((await check(path, Infinity)).index.owner("350", 300)).toBe(300);
  });

  it("uses scans started before it only when they scan what it would (the file, shard, parts and ranges); others are replaced", async () => {
    const content = `${lines(400).join("\n")}\n`;
    const path = await file(content);
    const twin = await file(content);
    const whole = await check(path, Infinity);
    const size = (await stat(path)).size;
    const [range] = idRanges(path, 64, size, 1000);
    const partitions = partitionsFor(size);
    const cases: Array<{ request: IdScanRequest; used: boolean }> = [
      { request: scanRequest(path, range!, partitions), used: true },
      { request: scanRequest(twin, range!, partitions), used: false },
      { request: scanRequest(path, range!, partitions, { index: 1, count: 2 }), used: false },
      { request: scanRequest(path, { start: range!.start, end: range!.end - 1 }, partitions), used: false },
      { request: scanRequest(path, range!, partitions * 2), used: false },
    ];
    for (const { request, used } of cases) {
      const started = startRangeScan(request);
      let read = false;
      const scan: RangeScan = { ...request, get result() { read = true; return started.result; }, cancel: () => {} };
      const split = await check(path, 1000, 64, { rangeScans: [scan] });
      expect(split.rest, JSON.stringify(request)).toEqual(whole.rest);
      expect(read, JSON.stringify(request)).toBe(used);
    }
    // A scan for shard 1 of 2 is the one a check of that shard uses.
    const sharded = scanRequest(path, range!, partitions, { index: 1, count: 2 });
    let read = false;
    const started = startRangeScan(sharded);
    const scan: RangeScan = { ...sharded, get result() { read = true; return started.result; }, cancel: () => {} };
    const split = await check(path, 1000, 64, { rangeScans: [scan], shard: { index: 1, count: 2 } });
    expect(read).toBe(true);
    expect(split.rest).toEqual((await check(path, Infinity, 64, { shard: { index: 1, count: 2 } })).rest);
  });
});
