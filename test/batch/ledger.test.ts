/**
 * The results file as ledger (src/batch/ledger.ts): refused without --resume when it holds
 * results; --resume cuts a torn last line, keeps final results, drops aborted ones (rewritten
 * atomically); a line that is not a result is named; the one writer appends whole lines under
 * concurrent writes.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openLedger, openResultsWriter } from "../../src/batch/ledger.js";
import { mergeResults } from "../../src/batch/merge.js";
import type { BatchResult } from "../../src/batch/types.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-ledger-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const result = (id: string, status: BatchResult["status"] = "ok", text = ""): BatchResult => ({ id, runId: `run-${id}`, status, stopReason: status === "ok" ? "completed" : status === "aborted" ? "aborted" : "error", text, usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 }, durationMs: 1 });
const line = (r: BatchResult) => `${JSON.stringify(r)}\n`;

describe("the results file, read streamed (src/batch/lines.ts) by --resume and batch merge", () => {
  // CRLF line ends (a file passed through a Windows tool), a result bigger than a 4 MiB read chunk, a torn last line.
  const big = result("big", "ok", "b".repeat(5 * 1024 * 1024));
  const crlf = (r: BatchResult) => `${JSON.stringify(r)}\r\n`;

  it("--resume keeps every final result, the big one whole, drops the aborted one and the torn line", async () => {
    const file = join(dir, "streamed-resume.jsonl");
    await writeFile(file, crlf(result("a")) + crlf(big) + crlf(result("x", "aborted")) + line(result("c", "error")) + '{"id":"torn","sta');
    const ledger = await openLedger(file, true);
    expect(ledger).toMatchObject({ repairedTornLine: true, dropped: 1 });
    expect([...ledger.done]).toEqual([["a", "ok"], ["big", "ok"], ["c", "error"]]);
    expect(await readFile(file, "utf8")).toBe(line(result("a")) + line(big) + line(result("c", "error")));
  });

  it("batch merge writes the big result whole, reads CRLF lines, and names the torn line", async () => {
    const one = join(dir, "streamed-1.jsonl");
    const two = join(dir, "streamed-2.jsonl");
    await writeFile(one, crlf(result("a")) + crlf(big) + '{"id":"torn","sta');
    await writeFile(two, crlf(result("b")) + crlf(result("a")));
    const out = join(dir, "streamed-all.jsonl");
    const report = await mergeResults([one, two], out);
    expect(report).toMatchObject({ results: 3, duplicateCount: 1, badLineCount: 1, complete: false });
    expect(report.badLines).toEqual([`${one} line 3: not JSON: is this a yiem batch results file?`]);
    expect(report.duplicates).toEqual([`a (${one} line 1; ${two} line 2)`]);
    expect(await readFile(out, "utf8")).toBe(line(result("a")) + line(big) + line(result("b")));
  });
});

describe("openLedger", () => {
  it("a missing or empty file starts a new batch; one with results needs --resume", async () => {
    expect((await openLedger(join(dir, "none.jsonl"), false)).done.size).toBe(0);
    await writeFile(join(dir, "empty.jsonl"), "");
    expect((await openLedger(join(dir, "empty.jsonl"), false)).done.size).toBe(0);
    await writeFile(join(dir, "full.jsonl"), line(result("a")));
    await expect(openLedger(join(dir, "full.jsonl"), false)).rejects.toThrow("already holds results: add --resume to continue that batch, or name a new file");
  });

  it("--resume: cuts a torn last line, keeps ok/error/limit, drops aborted lines from the file", async () => {
    const file = join(dir, "resume.jsonl");
    await writeFile(file, line(result("a")) + line(result("b", "aborted")) + line(result("c", "error")) + line(result("d", "limit")) + '{"id":"e","runId":"r","sta');
    const ledger = await openLedger(file, true);
    expect(ledger.repairedTornLine).toBe(true);
    expect(ledger.dropped).toBe(1);
    expect([...ledger.done]).toEqual([["a", "ok"], ["c", "error"], ["d", "limit"]]);
    expect(await readFile(file, "utf8")).toBe(line(result("a")) + line(result("c", "error")) + line(result("d", "limit")));
    // No temporary file is left behind.
    expect((await readdir(dir)).filter((name) => name.includes("yiem-tmp"))).toEqual([]);
  });

  it("--resume of a file whose only line is torn leaves it empty", async () => {
    const file = join(dir, "torn-only.jsonl");
    await writeFile(file, '{"id":"a"');
    const ledger = await openLedger(file, true);
    expect(ledger).toMatchObject({ repairedTornLine: true, dropped: 0 });
    expect(await readFile(file, "utf8")).toBe("");
  });

  it("--resume changes nothing in a file that is not a results file: every complete line is checked before a last line is cut", async () => {
    // An input named as -o by mistake: its one line has no newline, and is JSON but no result.
    const input = join(dir, "an-input.jsonl");
    await writeFile(input, '{"id":"a","prompt":"x"}');
    await expect(openLedger(input, true)).rejects.toThrow(`${input} line 1: not a result (it needs "id" and "status")`);
    expect(await readFile(input, "utf8")).toBe('{"id":"a","prompt":"x"}');
    // Two input lines: the first is named, the second (no newline) is not cut.
    await writeFile(input, '{"id":"a","prompt":"x"}\n{"id":"b","prompt":"y"}');
    await expect(openLedger(input, true)).rejects.toThrow(`${input} line 1: not a result`);
    expect(await readFile(input, "utf8")).toBe('{"id":"a","prompt":"x"}\n{"id":"b","prompt":"y"}');
    // Notes without a newline: not the start of a result line.
    const notes = join(dir, "notes.txt");
    await writeFile(notes, "remember the milk");
    await expect(openLedger(notes, true)).rejects.toThrow(`${notes} line 1: the last line has no newline and is not the start of a result`);
    expect(await readFile(notes, "utf8")).toBe("remember the milk");
    // Results, a line that is not one, and a torn last line: the error, and the torn line still there.
    const edited = join(dir, "edited.jsonl");
    const text = line(result("a")) + "oops\n" + '{"id":"t","sta';
    await writeFile(edited, text);
    await expect(openLedger(edited, true)).rejects.toThrow(`${edited} line 2: not JSON`);
    expect(await readFile(edited, "utf8")).toBe(text);
  });

  it("--resume keeps a last line that is a whole result without its newline, and gives it the newline", async () => {
    const file = join(dir, "no-final-newline.jsonl");
    await writeFile(file, line(result("a")) + JSON.stringify(result("b", "error")));
    const ledger = await openLedger(file, true);
    expect(ledger).toMatchObject({ repairedTornLine: false, dropped: 0 });
    expect([...ledger.done]).toEqual([["a", "ok"], ["b", "error"]]);
    expect(await readFile(file, "utf8")).toBe(line(result("a")) + line(result("b", "error")));
  });

  it("names a complete line that is not a result", async () => {
    const file = join(dir, "other.jsonl");
    await writeFile(file, line(result("a")) + '{"hello": 1}\n');
    await expect(openLedger(file, true)).rejects.toThrow(`${file} line 2: not a result (it needs "id" and "status"): is this a yiem batch results file?`);
    await writeFile(file, "plain text\n");
    await expect(openLedger(file, true)).rejects.toThrow(`${file} line 1: not JSON`);
  });
});

describe("openResultsWriter", () => {
  it("appends every result as one whole line (U+2028 and 100 kB texts too), also when many are written at once", async () => {
    const file = join(dir, "writer.jsonl");
    await writeFile(file, line(result("earlier")));
    const writer = await openResultsWriter(file);
    const big = "x".repeat(100_000);
    const written = Array.from({ length: 500 }, (_, i) => result(`id-${i}`, "ok", i % 10 === 0 ? big : `text ${i}\u2028`));
    await Promise.all(written.map(async (r, i) => {
      await new Promise((resolve) => setTimeout(resolve, i % 7));
      writer.write(r);
    }));
    await writer.close();
    const lines = (await readFile(file, "utf8")).split("\n");
    expect(lines.pop()).toBe("");
    const parsed = lines.map((text) => JSON.parse(text) as BatchResult);
    expect(parsed[0].id).toBe("earlier");
    expect(new Set(parsed.slice(1).map((r) => r.id))).toEqual(new Set(written.map((r) => r.id)));
    expect(parsed.find((r) => r.id === "id-10")!.text).toBe(big);
  });

  it("names a results file it cannot write", async () => {
    await expect(openResultsWriter(join(dir, "no-such-folder", "r.jsonl"))).rejects.toThrow(/-o .*r\.jsonl: cannot be written \(ENOENT\)/);
  });
});
