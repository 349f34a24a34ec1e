/**
 * The check pass's WebAssembly id scan (src/batch/bulk-scan.ts, src/batch/wasm/id-scan.wat)
 * against the JavaScript it replaces: for any lines, in any buffer position, it must read the
 * same lines (ends, `\r\n`, checkpoints) and give, line by line, exactly IdSpanReader's SPAN with
 * hashIdBytes' hash, or hand the line back. Also: the committed module is the compiled `.wat`,
 * and the radix sort of staged pairs is the engine's sort of their 64-bit values.
 */
import fc from "fast-check";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createBulkScanner, type BulkScanner, type BulkSink, type BulkStaging } from "../../src/batch/bulk-scan.js";
import { StagedIds } from "../../src/batch/staged-ids.js";
import { hashIdBytes } from "../../src/batch/id-index.js";
import { IdSpanReader, SPAN, spanIdAt } from "../../src/batch/line-id.js";
import { LineReader, READ_BUFFER_BYTES, type LineVisitor } from "../../src/batch/lines.js";
import { sortPairsByHalf } from "../../src/batch/pair-sort.js";
// @ts-expect-error: a build script (plain JavaScript, no types)
import { generatedModule, generatedPath, watFiles } from "../../scripts/wasm.mjs";

const root = join(import.meta.dirname, "../..");

type Seen = ["span", number, number, number, string] | ["other", number, number, number];

/** What the JavaScript path gives for the lines of `buffer[start..stop)`: one entry per line. */
function byJavaScript(buffer: Buffer, start: number, stop: number, firstLine: number): Seen[] {
  const seen: Seen[] = [];
  const reader = new IdSpanReader();
  const hashed = new Int32Array(2);
  let line = firstLine;
  for (let at = start; at < stop; line++) {
    const newline = buffer.indexOf(0x0a, at);
    const end = newline > at && buffer[newline - 1] === 0x0d ? newline - 1 : newline;
    if (reader.read(buffer, at, end, 0) === SPAN) {
      hashIdBytes(buffer, reader.idStart, reader.idEnd, hashed);
      seen.push(["span", line, hashed[0]!, hashed[1]!, buffer.toString("latin1", reader.idStart, reader.idEnd)]);
    } else seen.push(["other", line, at, end]);
    at = newline + 1;
  }
  return seen;
}

/** `text` copied to `at` of read buffer `which` of `scanner`, with junk around it. */
function placed(scanner: BulkScanner, text: string, at: number, which: number): { buffer: Buffer; bytes: Buffer } {
  const buffer = scanner.readBuffers[which]!;
  const bytes = Buffer.from(text, "latin1");
  buffer.fill(0x41, Math.max(0, at - 64), Math.min(buffer.length, at + bytes.length + 64));
  bytes.copy(buffer, at);
  return { buffer, bytes };
}

/** What the scanner gives for the same lines, placed at `at` of one of its read buffers (after junk). */
const shared = createBulkScanner();
function byScanner(text: string, at: number, firstLine: number, which = 0): { seen: Seen[]; lines: number | undefined; checkpoints: number[] } {
  if (!shared) throw new Error("no WebAssembly here");
  const scanner = shared;
  const { buffer, bytes } = placed(scanner, text, at, which);
  const seen: Seen[] = [];
  const sink: BulkSink = {
    span: (b, line, a, h, start) => void seen.push(["span", line, a, h, spanIdAt(b, start)]),
    other: (_b, line, start, end, offset) => {
      expect(offset).toBe(1000 + start);
      seen.push(["other", line, start, end]);
    },
  };
  const checkpoints: number[] = [];
  const lines = scanner.lines(buffer, at, at + bytes.length, firstLine, 1000, checkpoints, sink);
  return { seen, lines, checkpoints };
}

const lineText = fc.array(
  fc.constantFrom('{"id":"a"', '{"id":"b1","prompt":"p"', '{"custom_id":"c"', ',"id":"x"', ',"custom_id":"y"', "\\u0069", "\\", '\\"', 'id"', '_id"', '"id"', "}", ",", " ", "\t", "\r", "\xe9", "plain", '"', "{", "x".repeat(20), '{"id":""', '{"id":"\x01"'),
  { maxLength: 8 },
).map((parts) => parts.join(""));

describe("the WebAssembly id scan", () => {
  it("is the committed module: every .wat compiles to its generated file", async () => {
    const files = watFiles() as string[];
    expect(files).toContain("src/batch/wasm/id-scan.wat");
    for (const wat of files) expect(await generatedModule(wat), `${wat}: run node scripts/wasm.mjs`).toBe(readFileSync(join(root, generatedPath(wat)), "utf8"));
  });

  it("reads the common shapes as the JavaScript path does", () => {
    const text = [
      '{"id":"issue-17","prompt":"why?"}',
      '{"custom_id":"req-1","method":"POST","body":{"messages":[]}}',
      "plain text prompt",
      "",
      "   ",
      '{"id":"dup","id":"other"}',
      '{"custom_id":"c","id":"i"}',
      '{"id":"esc","prompt":"\\u0041"}',
      '{"id":"ok","prompt":"a \\"quoted\\" word"}',
      '{"id":"crlf"}\r',
      '{"id":"' + "x".repeat(512) + '"}',
      '{"id":"' + "x".repeat(513) + '"}',
      '{ "id":"spaced"}',
      '{"id":"a"b"}',
      '{"id"',
      "{",
    ].join("\n") + "\n";
    const { seen, lines } = byScanner(text, 0, 1);
    const bytes = Buffer.from(text, "latin1");
    expect(lines).toBe(16);
    expect(seen).toEqual(byJavaScript(bytes, 0, bytes.length, 1));
    expect(seen.filter((s) => s[0] === "span").map((s) => s[4])).toEqual(["issue-17", "req-1", "c", "ok", "crlf", "x".repeat(512)]);
  });

  it("property: any lines, at any place in either read buffer, give what the JavaScript path gives", () => {
    fc.assert(
      fc.property(fc.array(lineText, { minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 3000 }), fc.constantFrom(0, 1), (texts, at, firstLine, which) => {
        const text = texts.join("\n") + "\n";
        const bytes = Buffer.from(text, "latin1");
        const { seen, lines } = byScanner(text, at, firstLine, which);
        expect(lines).toBe(texts.length);
        expect(seen).toEqual(byJavaScript(bytes, 0, bytes.length, firstLine).map((s) => (s[0] === "other" ? ["other", s[1], s[2] + at, s[3] + at] : s)));
      }),
      { numRuns: 400 },
    );
  });

  it("reads lines at the very end of a read buffer (its slack past the buffer is never data)", () => {
    const text = '{"id":"last","p":"q"}\n{"id":"end"}\n';
    const { seen } = byScanner(text, READ_BUFFER_BYTES - text.length, 7, 1);
    expect(seen.map((s) => s[0] === "span" && s[4])).toEqual(["last", "end"]);
  });

  it("records the checkpoint of every 1,024th line and hands over more lines than one call's records", () => {
    const count = 40_000;
    const text = Array.from({ length: count }, (_, i) => (i % 7 === 3 ? "plain" : `{"id":"k${i}"}`)).join("\n") + "\n";
    const { seen, lines, checkpoints } = byScanner(text, 0, 1);
    expect(lines).toBe(count);
    expect(seen.length).toBe(count);
    expect(seen.map((s) => s[1])).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    let offset = 1000;
    const starts: number[] = [];
    text.split("\n").slice(0, count).forEach((line, i) => {
      if (i % 1024 === 0) starts.push(offset);
      offset += line.length + 1;
    });
    expect(checkpoints).toEqual(starts);
  });

  it("leaves a buffer not in its memory to be read line by line", () => {
    const scanner = createBulkScanner()!;
    const sink: BulkSink = { span: () => {}, other: () => {} };
    expect(scanner.lines(Buffer.from('{"id":"a"}\n'), 0, 11, 1, 0, [], sink)).toBeUndefined();
  });

  it("gives a LineReader's visitor the same lines and checkpoints as the line-by-line reader, across chunks and long lines", async () => {
    const dir = mkdtempSync(join(tmpdir(), "yiem-bulk-"));
    const file = join(dir, "in.jsonl");
    const long = `{"id":"long","prompt":"${"y".repeat(200_000)}"}`;
    const lines = Array.from({ length: 120_000 }, (_, i) => (i === 50_000 ? long : i % 5 === 0 ? `{"custom_id":"c${i}","body":{}}` : i % 11 === 0 ? `plain ${i}` : `{"id":"n${i}","prompt":"${"z".repeat(i % 300)}"}\r`));
    writeFileSync(file, "\ufeff" + lines.join("\n"));
    const read = async (bulk: boolean) => {
      const scanner = bulk ? createBulkScanner()! : undefined;
      const reader = await LineReader.open(file, undefined, scanner ? { buffers: scanner.readBuffers } : {});
      const seen: string[] = [];
      let bulkLines = 0;
      const visitor: LineVisitor = {
        line: (buffer, start, end, line, offset) => void seen.push(`${line}@${offset}:${buffer.toString("latin1", start, end).slice(0, 30)}`),
        tooLong: (line) => void seen.push(`${line}: too long`),
      };
      if (scanner) {
        const sink: BulkSink = {
          span: (buffer, line, _a, _b, start) => {
            bulkLines++;
            const end = buffer.indexOf(0x0a, start);
            visitor.line(buffer, start, buffer[end - 1] === 0x0d ? end - 1 : end, line, -1);
          },
          other: (buffer, line, start, end, offset) => visitor.line(buffer, start, end, line, offset),
        };
        visitor.lines = (buffer, start, stop, firstLine, base, checkpoints) => scanner.lines(buffer, start, stop, firstLine, base, checkpoints, sink);
      }
      while (await reader.next(visitor));
      // A span's offset is not handed over (its line's checkpoints say where lines are): compared without offsets.
      return { seen: seen.map((s) => s.replace(/@-?\d+:/, ":")), checkpoints: reader.checkpoints, lines: reader.lines, bulkLines };
    };
    const plain = await read(false);
    const bulk = await read(true);
    expect(bulk.lines).toBe(120_000);
    expect(bulk.bulkLines).toBeGreaterThan(100_000);
    expect(bulk.seen).toEqual(plain.seen);
    expect(bulk.checkpoints).toEqual(plain.checkpoints);
  });
});

/** The pairs of every part of `ids` (each sorted as 64-bit values: the order within a part is free) and its marks of lines 1..`lines`. */
function stagedOf(ids: StagedIds, lines: number): { parts: bigint[][]; marks: number[] } {
  const range = ids.exportSorted(lines);
  return { parts: range.parts.map((words) => [...new BigUint64Array(words.slice().buffer)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))), marks: [...range.marks.subarray(1, lines + 1)] };
}

describe("the WebAssembly id scan staging the ids itself (stageLines)", () => {
  /** The same lines staged line by line (`lines` and StagedIds.stage) and by the module (`stageLines`), at `at` of read buffer `which`, lines from `firstLine`. */
  function bothWays(text: string, at: number, firstLine: number, which: number, partitions: number) {
    const scanner = createBulkScanner(partitions)!;
    const { buffer, bytes } = placed(scanner, text, at, which);
    const lastLine = firstLine + text.split("\n").length - 2;
    const byLine = new StagedIds(() => undefined, partitions);
    const othersByLine: string[] = [];
    const checkpointsByLine: number[] = [];
    const sink: BulkSink = {
      span: (_b, line, a, h) => byLine.stage(a, h, line),
      other: (_b, line, start, end, offset) => void othersByLine.push(`${line}:${start}-${end}@${offset}`),
    };
    const linesByLine = scanner.lines(buffer, at, at + bytes.length, firstLine, 1000, checkpointsByLine, sink);
    const byModule = new StagedIds(() => undefined, partitions);
    const othersByModule: string[] = [];
    const checkpointsByModule: number[] = [];
    let spans = 0;
    const staging: BulkStaging = {
      ids: byModule,
      spans: (count) => void (spans += count),
      other: (_b, line, start, end, offset) => void othersByModule.push(`${line}:${start}-${end}@${offset}`),
    };
    const linesByModule = scanner.stageLines(buffer, at, at + bytes.length, firstLine, 1000, checkpointsByModule, staging);
    expect(linesByModule).toBe(linesByLine);
    expect(othersByModule).toEqual(othersByLine);
    expect(checkpointsByModule).toEqual(checkpointsByLine);
    expect(spans).toBe(linesByLine! - othersByLine.length);
    // Marks of the other lines are not compared: stage() leaves them, the module writes 0 (no pair of theirs is staged).
    const a = stagedOf(byModule, lastLine);
    const b = stagedOf(byLine, lastLine);
    expect(a.parts).toEqual(b.parts);
    const otherLines = new Set(othersByLine.map((o) => Number(o.split(":")[0])));
    const spanMarks = (marks: number[]) => marks.map((m, i) => (otherLines.has(i + 1) ? -1 : m));
    expect(spanMarks(a.marks)).toEqual(spanMarks(b.marks));
    return spans;
  }

  it("property: any lines, at any place in either read buffer, any partitions, stage what stage() line by line stages", () => {
    fc.assert(
      fc.property(fc.array(lineText, { minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 3000 }), fc.constantFrom(0, 1), fc.constantFrom(1, 2, 16, 256), (texts, at, firstLine, which, partitions) => {
        bothWays(texts.join("\n") + "\n", at, firstLine, which, partitions);
      }),
      { numRuns: 300 },
    );
  });

  it("stages more lines than one call takes, with their checkpoints, into 16 parts", () => {
    const text = Array.from({ length: 40_000 }, (_, i) => (i % 7 === 3 ? "plain" : i % 13 === 5 ? `{"id":"k${i % 500}"}` : `{"id":"k${i}","prompt":"p"}`)).join("\n") + "\n";
    expect(bothWays(text, 0, 1, 0, 16)).toBe(40_000 - Math.ceil((40_000 - 3) / 7));
  });

  it("leaves a buffer not in its memory, a StagedIds of other partitions and lines past an absorbed range to lines()", () => {
    const scanner = createBulkScanner(4)!;
    const text = Buffer.from('{"id":"a"}\n');
    text.copy(scanner.readBuffers[0]!);
    const staging = (ids: StagedIds): BulkStaging => ({ ids, spans: () => {}, other: () => {} });
    expect(scanner.stageLines(Buffer.from(text), 0, 11, 1, 0, [], staging(new StagedIds(() => undefined, 4)))).toBeUndefined();
    expect(scanner.stageLines(scanner.readBuffers[0]!, 0, 11, 1, 0, [], staging(new StagedIds(() => undefined, 2)))).toBeUndefined();
    const absorbed = new StagedIds(() => undefined, 4);
    absorbed.absorb({ parts: [new Uint32Array(0), new Uint32Array(0), new Uint32Array(0), new Uint32Array(0)], marks: new Uint16Array(2) }, 0);
    expect(scanner.stageLines(scanner.readBuffers[0]!, 0, 11, 1, 0, [], staging(absorbed))).toBeUndefined();
    expect(scanner.stageLines(scanner.readBuffers[0]!, 0, 11, 1, 0, [], staging(new StagedIds(() => undefined, 4)))).toBe(1);
  });
});

describe("sortPairsByHalf", () => {
  it("property: sorts [line, half] pairs as the engine sorts their 64-bit values (lines staged in order), with any scratch at least as long", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 0xffffffff })), { minLength: 0, maxLength: 3000 }), (halves) => {
        const words = new Uint32Array(halves.length * 2);
        halves.forEach((half, i) => {
          words[2 * i] = i + 1;
          words[2 * i + 1] = half;
        });
        const expected = words.slice();
        new BigUint64Array(expected.buffer).sort();
        // The scratch of a StagedIds is as long as its longest part: longer than this one's, at times.
        sortPairsByHalf(words, new Uint32Array(words.length + (halves.length % 3) * 6));
        expect(words).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });
});
