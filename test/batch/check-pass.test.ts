/**
 * The check pass at scale (src/batch/lines.ts, id-index.ts, check-pass.ts, runner.ts): lines read as byte spans
 * (BOM, CRLF, a line over the cap skipped, any line read again from a checkpoint), ids kept as
 * hashes and compared exactly when two hashes meet, the check's part read for ids only, and the
 * run pass refusing a line whose id is not the one the check counted.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHECKPOINT_LINES, LineReader, lineAt, MAX_LINE_BYTES } from "../../src/batch/lines.js";
import { hashId, IdIndex, type IdHash, type IdOwners } from "../../src/batch/id-index.js";
import { StagedIds } from "../../src/batch/staged-ids.js";
import { partitionsFor } from "../../src/batch/range-plan.js";
import { entries, type BatchSource } from "../../src/batch/runner.js";
import { checkInput } from "../../src/batch/check-pass.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-check-pass-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));
let n = 0;
async function file(content: string | Buffer): Promise<string> {
  const path = join(dir, `input-${++n}.jsonl`);
  await writeFile(path, content);
  return path;
}

async function readAll(path: string, soon = false) {
  const reader = await LineReader.open(path, undefined, { soon });
  const lines: Array<{ line: number; text?: string; tooLong?: number; offset: number }> = [];
  const visitor = {
    line: (b: Buffer, s: number, e: number, line: number, offset: number) => void lines.push({ line, text: b.toString("utf8", s, e), offset }),
    tooLong: (line: number, tooLong: number, offset: number) => void lines.push({ line, tooLong, offset }),
  };
  while (await reader.next(visitor));
  return { lines, reader };
}

describe("LineReader", () => {
  it("opened `soon`, hands over its first lines after a small read, then reads the same lines as a plain reader", async () => {
    const long = `{"id":"long","prompt":"${"y".repeat(100 * 1024)}"}`;
    const rest = Array.from({ length: 20000 }, (_, i) => `{"id":"r${i}"}`);
    for (const content of [[...rest].join("\n"), [long, ...rest].join("\r\n"), [rest[0], long, ...rest.slice(1)].join("\n")]) {
      const path = await file(`${content}\n`);
      const soon = await readAll(path, true);
      const plain = await readAll(path);
      expect(soon.lines).toEqual(plain.lines);
      expect(soon.reader.checkpoints).toEqual(plain.reader.checkpoints);
    }
    const path = await file(`${rest.join("\n")}\n`);
    const reader = await LineReader.open(path, undefined, { soon: true });
    let first = 0;
    await reader.next({ line: () => void first++, tooLong: () => {} });
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(10000);
    await reader.close();
  });

  it("drops a BOM and a \\r before \\n, keeps a last line without newline, gives byte offsets", async () => {
    const { lines } = await readAll(await file(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"id":"a"}\r\n\né\nlast')])));
    expect(lines).toEqual([
      { line: 1, text: '{"id":"a"}', offset: 3 },
      { line: 2, text: "", offset: 15 },
      { line: 3, text: "é", offset: 16 },
      { line: 4, text: "last", offset: 19 },
    ]);
  });

  it("skips a line over the cap by its length without holding it, and reads any line again from its checkpoint", async () => {
    const many = Array.from({ length: CHECKPOINT_LINES * 2 + 5 }, (_, i) => `line ${i + 1}`);
    const big = "x".repeat(MAX_LINE_BYTES + 10);
    const path = await file(`${many.join("\n")}\n${big}\r\nafter\n`);
    const { lines, reader } = await readAll(path);
    const last = lines.length;
    expect(lines[last - 2]).toMatchObject({ line: many.length + 1, tooLong: MAX_LINE_BYTES + 11 });
    expect(lines[last - 1]).toMatchObject({ line: many.length + 2, text: "after" });
    expect(reader.checkpoints.length).toBe(3);
    for (const line of [1, CHECKPOINT_LINES, CHECKPOINT_LINES + 1, many.length]) expect(lineAt(path, line, reader.checkpoints)?.toString()).toBe(`line ${line}`);
    expect(lineAt(path, many.length + 1, reader.checkpoints)).toBeUndefined();
    expect(lineAt(path, many.length + 2, reader.checkpoints)?.toString()).toBe("after");
    expect(lineAt(path, many.length + 9, reader.checkpoints)).toBeUndefined();
  });
});

describe("LineReader across chunks", () => {
  it("gives every line whole with its offset, whatever its length against the read chunk and the head room (short, ~64 KiB, ~5 MiB lines, CRLF)", async () => {
    let seed = 7;
    const random = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    const texts: string[] = [];
    for (let i = 0; i < 400; i++) {
      const kind = random(20);
      const length = kind === 0 ? 64 * 1024 - 2 + random(5) : kind === 1 ? 60 * 1024 + random(10 * 1024) : kind === 2 && i % 50 === 0 ? 5 * 1024 * 1024 + random(1000) : random(3000);
      texts.push(`${i}:`.padEnd(length, String.fromCharCode(97 + (i % 26))));
    }
    const content = texts.map((t, i) => (i % 7 === 0 ? `${t}\r\n` : `${t}\n`)).join("");
    const path = await file(content);
    const { lines, reader } = await readAll(path);
    expect(lines.map((l) => l.text)).toEqual(texts);
    let offset = 0;
    lines.forEach((l, i) => {
      expect(l.offset, `line ${i + 1}`).toBe(offset);
      offset += Buffer.byteLength(texts[i]!) + (i % 7 === 0 ? 2 : 1);
    });
    for (const line of [1, 2, 200, 399, 400]) expect(lineAt(path, line, reader.checkpoints)?.toString()).toBe(texts[line - 1]);
  });
});

describe("IdIndex", () => {
  it("tells apart ids whose hashes meet by reading the earlier line again, and finds real repeats", () => {
    const byLine = new Map<number, string>();
    const reads: number[] = [];
    const index = new IdIndex((line) => (reads.push(line), byLine.get(line)), (_id, out) => void out.fill(1));
    const add = (id: string, line: number) => (byLine.set(line, id), index.add(id, line));
    expect(add("a", 1)).toBe(true);
    expect(add("b", 2)).toBe(true); // the same hash, another id
    expect(add("c", 3)).toBe(true);
    expect(add("a", 4)).toBe(false);
    expect(add("b", 5)).toBe(false);
    expect(reads.length).toBeGreaterThan(0);
    expect(index.size).toBe(3);
    expect([index.owner("a", 4), index.owner("b", 2), index.owner("c", 3), index.owner("d", 6)]).toEqual([1, 2, 3, -1]);
  });

  it("grows past its first capacity and keeps every id", () => {
    const index = new IdIndex(() => undefined);
    for (let i = 1; i <= 50_000; i++) expect(index.add(`id-${i}`, i)).toBe(true);
    expect(index.size).toBe(50_000);
    expect(index.owner("id-1", 1)).toBe(1);
    expect(index.owner("id-49999", 49_999)).toBe(49_999);
    expect(index.owner("id-50001", 50_001)).toBe(-1);
  });

  it("is sized at once by expect, and left as it was when that table cannot be allocated", () => {
    const index = new IdIndex((line) => `id-${line}`);
    for (let i = 1; i <= 100; i++) index.add(`id-${i}`, i);
    index.expect(2 ** 40); // no such table: kept as it was
    index.expect(200_000);
    for (let i = 101; i <= 1_000; i++) expect(index.add(`id-${i}`, i)).toBe(true);
    expect(index.add("id-7", 2_000)).toBe(false);
    expect([index.size, index.owner("id-1", 1), index.owner("id-1000", 1_000), index.owner("id-1001", 1_001)]).toEqual([1_000, 1, 1_000, -1]);
  });
});

describe("the check pass past its full part, and the run pass after it", () => {
  const source = (path: string, extra: Partial<BatchSource> = {}): BatchSource => ({ file: path, done: new Map(), prepare: () => {}, ...extra });
  const collect = async (s: BatchSource, checked?: IdOwners) => {
    const out: string[] = [];
    for await (const entry of entries(s, checked)) out.push("item" in entry ? entry.item.id : `${entry.id}: ${entry.bad.reason}`);
    return out;
  };

  it("reads only ids past fullCheckBytes (an unknown key passes, a repeated id does not); the run pass finds the rest", async () => {
    const path = await file(['{"id":"a","prompt":"p"}', '{"id":"b","promt":"typo"}', '{"id":"a","prompt":"again"}', "plain"].join("\n"));
    const full = await checkInput(source(path));
    expect(full.problems).toEqual(['line 2 (id "b"): unknown key "promt" (an item has id, prompt, stdin, attachments, vars)', 'line 3: the id "a" is used by an earlier line too: ids must be unique']);
    expect(full.idsOnlyFrom).toBeUndefined();
    const idsOnly = await checkInput(source(path, { fullCheckBytes: 0 }));
    expect(idsOnly).toMatchObject({ total: 4, problemCount: 1, problems: ['line 3: the id "a" is used by an earlier line too: ids must be unique'], idsOnlyFrom: 1 });
    expect(await collect(source(path), idsOnly.index)).toEqual(["a", 'line:2: unknown key "promt" (an item has id, prompt, stdin, attachments, vars)', 'line:3: the id "a" is used by an earlier line too: ids must be unique', "4"]);
  });

  it("reads only ids past fullCheckLines too (the lines are counted, blank ones included)", async () => {
    const path = await file(['{"id":"a","prompt":"p"}', "", '{"id":"b","promt":"typo"}', '{"id":"c","promt":"typo"}', '{"id":"a"}'].join("\n"));
    const report = await checkInput(source(path, { fullCheckLines: 3 }));
    expect(report).toMatchObject({ total: 4, problemCount: 2, idsOnlyFrom: 4 });
    expect(report.problems).toEqual(['line 3 (id "b"): unknown key "promt" (an item has id, prompt, stdin, attachments, vars)', 'line 5: the id "a" is used by an earlier line too: ids must be unique']);
  });

  it("gives the same report and owners whether the ids-only lines are read a chunk at a time (WebAssembly) or line by line", async () => {
    const lines = Array.from({ length: 30_000 }, (_, i) => {
      if (i % 97 === 5) return `plain prompt ${i}`;
      if (i % 89 === 7) return `{"custom_id":"c${i}","method":"POST","url":"/v1/chat/completions","body":{"messages":[]}}`;
      if (i % 1009 === 11) return `{"id":"k${i - 1000}","prompt":"a repeat"}`;
      if (i % 2003 === 13) return "{not json";
      if (i % 3001 === 17) return `{"id":"esc\\u0041${i}","prompt":"p"}`;
      return `{"id":"k${i}","prompt":"${"p".repeat(i % 50)}"}${i % 3 === 0 ? "\r" : ""}`;
    });
    const path = await file(lines.join("\n"));
    // fullCheckBytes 0 alone: the first chunk is read line by line (it starts at byte 0); fullCheckLines 0 too: in one go.
    const byLine = await checkInput(source(path, { fullCheckBytes: 0 }));
    const byChunk = await checkInput(source(path, { fullCheckBytes: 0, fullCheckLines: 0 }));
    const { index: lineIndex, ...lineReport } = byLine;
    const { index: chunkIndex, ...chunkReport } = byChunk;
    expect(chunkReport).toEqual(lineReport);
    expect(lineReport.problemCount).toBeGreaterThan(20);
    for (const [id, line] of [["k0", 1], ["k29999", 30_000], ["c7", 8], ["k1000", 1001], ["6", 6], ["nope", -1]] as const) {
      expect(chunkIndex.owner(id, line)).toBe(lineIndex.owner(id, line));
    }
  });

  it("refuses, as a bad line, a line whose id is not the one the check counted for it", async () => {
    const path = await file('{"id":"a"}\n{"id":"b"}\n{"id":"c"}\n');
    const report = await checkInput(source(path, { fullCheckBytes: 0 }));
    expect(report.problemCount).toBe(0);
    await writeFile(path, '{"id":"a"}\n{"id":"x"}\n{"id":"a"}\n{"id":"c"}\n');
    expect(await collect(source(path), report.index)).toEqual([
      "a",
      "line:2: this id is not the one the check pass read from this line (was the input changed while the batch ran?)",
      'line:3: the id "a" is used by an earlier line too: ids must be unique',
      "line:4: this id is not the one the check pass read from this line (was the input changed while the batch ran?)",
    ]);
  });
});

describe("StagedIds (the check pass's ids read from bytes)", () => {
  const hashOf = (id: string) => {
    const out = new Int32Array(2);
    hashId(id, out);
    return out;
  };

  it("finds repeats across parts, tells apart ids whose kept hashes meet by reading both lines again, and answers owner", () => {
    const byLine = new Map<number, string>();
    const reads: number[] = [];
    const weak: IdHash = (id, out) => void out.set(id.startsWith("weak") ? [7, 7] : hashOf(id));
    const ids = new StagedIds((line) => (reads.push(line), byLine.get(line)), 8, weak);
    const stage = (id: string, line: number) => {
      byLine.set(line, id);
      const out = new Int32Array(2);
      weak(id, out);
      ids.stage(out[0]!, out[1]!, line);
    };
    ids.expect(20);
    ["a", "weak-1", "b", "weak-2", "a", "weak-1", "c", "weak-2", "weak-3"].forEach((id, i) => stage(id, i + 1));
    expect(reads).toEqual([]); // nothing is read again while staging
    const repeats: Array<[number, string, number]> = [];
    ids.resolve((line, id, owner) => repeats.push([line, id, owner]));
    expect(repeats.sort((x, y) => x[0] - y[0])).toEqual([[5, "a", 1], [6, "weak-1", 2], [8, "weak-2", 4]]);
    expect(ids.size).toBe(9);
    expect([ids.owner("a", 1), ids.owner("a", 5), ids.owner("weak-2", 4), ids.owner("weak-2", 8), ids.owner("weak-3", 9), ids.owner("d", 10), ids.owner("weak-4", 10)]).toEqual([1, 1, 4, 4, 9, -1, -1]);
  });

  it("reads no line again when only the kept half of two hashes meets (their marks differ)", () => {
    const reads: number[] = [];
    const ids = new StagedIds((line) => (reads.push(line), `id-${line}`), 4, (id, out) => void out.set([Number(id.slice(3)), 7]));
    for (let line = 1; line <= 50; line++) ids.stage(line, 7, line);
    let repeats = 0;
    ids.resolve(() => repeats++);
    expect([repeats, reads.length]).toEqual([0, 0]);
    expect([ids.owner("id-20", 20), ids.owner("id-51", 51)]).toEqual([20, -1]);
    expect(reads).toEqual([]);
  });

  it("holds many ids in one part or many, and grows a part past what expect() sized", () => {
    for (const partitions of [1, 64]) {
      const ids = new StagedIds(() => undefined, partitions);
      ids.expect(2 ** 42); // more than one buffer may hold: the queues grow as ids come instead
      ids.expect(100);
      for (let i = 1; i <= 30_000; i++) {
        const out = hashOf(`id-${i}`);
        ids.stage(out[0]!, out[1]!, i);
      }
      let repeats = 0;
      ids.resolve(() => repeats++);
      expect(repeats).toBe(0);
      expect(ids.owner("id-1", 1)).toBe(1);
      expect(ids.owner("id-29999", 29_999)).toBe(29_999);
      expect(ids.owner("id-30001", 30_001)).toBe(-1);
    }
    expect([partitionsFor(0), partitionsFor(64 * 2 ** 20), partitionsFor(64 * 2 ** 20 + 1), partitionsFor(2 ** 30), partitionsFor(2 ** 40)]).toEqual([1, 1, 2, 16, 256]);
  });

  it("the check pass reports the bad lines in line order, repeats found after the scan among them, the first 10 and the count", async () => {
    const lines = ['{"id":"a"}', "{broken", '{"id":"a"}', "plain", '{"id":"b"}', "{broken", ...Array.from({ length: 12 }, () => '{"id":"b"}')];
    const path = await file(lines.join("\n"));
    for (const fullCheckBytes of [0, Infinity]) {
      const report = await checkInput({ file: path, done: new Map(), prepare: () => {}, fullCheckBytes });
      expect(report.problemCount).toBe(2 + 1 + 12);
      expect(report.problems[0]).toMatch(/^line 2: not valid JSON/);
      expect(report.problems[1]).toBe('line 3: the id "a" is used by an earlier line too: ids must be unique');
      expect(report.problems[2]).toMatch(/^line 6: not valid JSON/);
      expect(report.problems.slice(3)).toEqual(Array.from({ length: 7 }, (_, i) => `line ${7 + i}: the id "b" is used by an earlier line too: ids must be unique`));
      expect(report).toMatchObject({ total: lines.length, lines: lines.length });
    }
  });
});
