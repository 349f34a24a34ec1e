/**
 * The check pass of a batch (docs/batch.md, "Bad lines, and the check pass"), run before anything
 * else: `checkInput`.
 *
 * Rules:
 * - It reads the whole input once, streamed, and keeps only the ids (./staged-ids.ts): every
 *   line's id is read and repeated ids are found, and the items this batch will run are counted.
 *   The lines of the first `fullCheckBytes` bytes, at most `fullCheckLines` of them, are also
 *   parsed and prepared whole (a bad line, a template placeholder without a value; their repeats
 *   found at once, ./id-index.ts); past them only the id is read, from the line's bytes
 *   (./line-id.ts; a chunk at a time by ./bulk-scan.ts where it can), and staged, so a big input
 *   starts at once.
 * - Without a ledger, a big input's bytes past `fullCheckBytes` are shared with a worker thread
 *   (./range-plan.ts plans the ranges, ./range-scan.ts and ./id-scan.ts scan one: its range cut
 *   after a `\n`, its line numbers offset by the lines before it, its staged ids absorbed), which
 *   may be started before the source is ready (`startIdRangeScans`, or before the CLI loaded:
 *   ../cli/early-scan.ts); such a scan is used only when it scans what this check would.
 * - Bad lines are reported together, in line order (at most MAX_REPORTED), and counted as
 *   ./runner.ts says (by the id they name, else `line:N`), so its total is the run pass's.
 */
import { InputLineError, parseItem } from "./input.js";
import { hashId, hashLineNumber, IdIndex, type IdOwners } from "./id-index.js";
import { StagedIds } from "./staged-ids.js";
import { IdSpanReader } from "./line-id.js";
import { LineReader, type LineSegment, type LineVisitor } from "./lines.js";
import { createBulkScanner, idOnlyLines } from "./bulk-scan.js";
import { MAX_REPORTED, stageIdOnly, type IdScanResult } from "./id-scan.js";
import { FULL_CHECK_BYTES, ID_RANGE_BYTES, idRanges, partitionsFor, rangeRequests, scanRequest } from "./range-plan.js";
import { startRangeScan, type RangeScan } from "./range-scan.js";
import { badLineKey, idReader, inShard, repeatedId, type BatchSource } from "./runner.js";
import type { BatchItem } from "./types.js";
import type { Shard } from "./shard.js";
import { stat } from "node:fs/promises";

export { FULL_CHECK_BYTES };
/**
 * ... and at most this many lines: parsing and preparing a line whole costs about the same
 * whatever its length (~2.5 µs for a 100-byte line on the 2-core machine, docs/performance.md),
 * so the bytes alone would give an input of short lines a check several times longer.
 */
export const FULL_CHECK_LINES = 100_000;

export interface CheckReport {
  /** Items of this shard (bad lines under skipBadLines included). */
  total: number;
  /** Of those, already done (skipped). */
  skipped: number;
  /** Lines of the input, items of other shards included. */
  lines: number;
  /** The bad lines (at most MAX_REPORTED messages) and how many there were. */
  problems: string[];
  problemCount: number;
  /** The first line of which only the id was checked (past `fullCheckBytes` or `fullCheckLines`); absent when every line was checked whole. */
  idsOnlyFrom?: number;
  /** The ids the check counted, each with its line: the run pass holds every line to them. */
  index: IdOwners;
}

/** The range scans of the check pass of `file` with the default `fullCheckBytes` and without a ledger, started now (see BatchSource.rangeScans); none when the file cannot be read. */
export function startIdRangeScans(file: string, shard?: Shard): RangeScan[] {
  return rangeRequests(file, shard).map(startRangeScan);
}

/** The check pass (see module rules); `signal` ends it early (the report then counts what was read). */
export async function checkInput(source: BatchSource, signal?: AbortSignal): Promise<CheckReport> {
  const size = (await stat(source.file)).size;
  const fullBytes = source.fullCheckBytes ?? FULL_CHECK_BYTES;
  const partitions = partitionsFor(size);
  // With a ledger the counts need every id as a string: scanned here alone.
  const ranges = source.done.size === 0 ? idRanges(source.file, fullBytes, size, source.idRangeBytes ?? ID_RANGE_BYTES) : [];
  const early = source.rangeScans ?? [];
  const fits = early.length === ranges.length && early.every((scan, k) => scan.file === source.file && sameShard(scan.shard, source.shard) && scan.partitions === partitions && scan.range.start === ranges[k]!.start && scan.range.end === ranges[k]!.end);
  if (!fits) for (const scan of early) scan.cancel();
  const scans: RangeScan[] = fits ? early : ranges.map((range) => startRangeScan(scanRequest(source.file, range, partitions, source.shard)));
  try {
    return await checkWithRanges(source, size, fullBytes, source.fullCheckLines ?? FULL_CHECK_LINES, partitions, scans, signal);
  } finally {
    for (const scan of scans) scan.cancel();
  }
}

/** Whether a scan for shard `a` counts the items of shard `b` (no shard and one of one are the same). */
function sameShard(a: Shard | undefined, b: Shard | undefined): boolean {
  const whole = (shard: Shard | undefined) => shard === undefined || shard.count <= 1;
  return whole(a) ? whole(b) : b !== undefined && a!.index === b.index && a!.count === b.count;
}

async function checkWithRanges(source: BatchSource, size: number, fullBytes: number, fullLines: number, partitions: number, scans: RangeScan[], signal?: AbortSignal): Promise<CheckReport> {
  const mainEnd = scans[0]?.range.start ?? size;
  const bulk = createBulkScanner(partitions);
  const reader = await LineReader.open(source.file, { start: 0, end: mainEnd }, bulk ? { buffers: bulk.readBuffers } : {});
  const segments: LineSegment[] = [{ firstLine: 1, checkpoints: reader.checkpoints }];
  const idAt = idReader(source.file, segments);
  /** Every id, staged (the run pass's `owner`); the lines parsed whole also go to `early` at once, which finds their repeats in line order. */
  const index = new StagedIds(idAt, partitions);
  const early = new IdIndex(idAt);
  const report: CheckReport = { total: 0, skipped: 0, lines: 0, problems: [], problemCount: 0, index };
  /** The shard and the ledger need the id as a string; without either, an id read from bytes stays bytes. */
  const needsIds = (source.shard !== undefined && source.shard.count > 1) || source.done.size > 0;
  const count = (id: string, by = 1) => {
    report.lines += by;
    if (!inShard(source, id)) return;
    report.total += by;
    if (source.done.has(id)) report.skipped += by;
  };
  /** Bad lines in line order: those of the scan, then the repeats `resolve` finds (merged by line at the end). */
  const problems: Array<{ line: number; message: string }> = [];
  const repeats: Array<{ line: number; message: string }> = [];
  const bad = (error: unknown, key: string) => {
    if (!(error instanceof InputLineError)) throw error;
    report.problemCount++;
    if (problems.length < MAX_REPORTED) problems.push({ line: error.line, message: error.message });
    count(key);
  };
  /** `by` good lines read for their ids only (the id as a string only when `needsIds`, "" otherwise). */
  const countedIdOnly = (id: string, by = 1) => {
    if (!needsIds) {
      report.lines += by;
      report.total += by;
    } else count(id, by);
  };
  const spans = new IdSpanReader();
  const hashed = new Int32Array(2);
  const visitor: LineVisitor = {
    line(buffer: Buffer, start: number, end: number, line: number, offset: number) {
      if (offset + (end - start) > fullBytes || line > fullLines) {
        report.idsOnlyFrom ??= line;
        let id: string | null;
        try {
          id = stageIdOnly(spans, hashed, index, buffer, start, end, line, offset - start, needsIds);
        } catch (error) {
          bad(error, `line:${line}`);
          return;
        }
        if (id !== null) countedIdOnly(id);
        return;
      }
      let item: BatchItem | null;
      try {
        item = parseItem({ line, text: buffer.toString("utf8", start, end) });
      } catch (error) {
        bad(error, error instanceof InputLineError ? badLineKey(error, buffer, start, end) : "");
        return;
      }
      if (item === null) return;
      if (!early.add(item.id, line)) {
        bad(repeatedId(line, item.id), `line:${line}`);
        return;
      }
      hashId(item.id, hashed);
      index.stage(hashed[0]!, hashed[1]!, line);
      try {
        source.prepare(item);
      } catch (error) {
        bad(new InputLineError(line, (error as Error).message, item.id), item.id);
        return;
      }
      count(item.id);
    },
    tooLong(line: number, bytes: number) {
      try {
        parseItem({ line, tooLong: bytes });
      } catch (error) {
        bad(error, `line:${line}`);
      }
    },
  };
  if (bulk) {
    // Chunks wholly past `fullBytes` or `fullLines`: the lines whose id the module reads (./bulk-scan.ts) are staged as stageIdOnly stages them.
    const idOnly = idOnlyLines(bulk, index, needsIds, countedIdOnly, (buffer, line, start, end, offset) => visitor.line(buffer, start, end, line, offset));
    visitor.lines = (buffer, start, stop, firstLine, base, checkpoints) => {
      if (base + start <= fullBytes && firstLine <= fullLines) return undefined;
      report.idsOnlyFrom ??= firstLine;
      return idOnly(buffer, start, stop, firstLine, base, checkpoints);
    };
  }
  try {
    // The first chunk tells the average line length: the queues are sized for the whole file at once.
    if (!signal?.aborted && (await reader.next(visitor)) && reader.lines > 0) {
      const linesPerByte = reader.lines / reader.bytesRead;
      index.expect(Math.ceil(mainEnd * linesPerByte));
      early.expect(Math.min(fullLines, Math.ceil(Math.min(fullBytes, mainEnd) * linesPerByte)));
    }
    while (!signal?.aborted && (await reader.next(visitor)));
  } finally {
    await reader.close();
  }
  // This thread's queues are sorted while the worker may still scan (only a part staged to below is sorted again).
  if (scans.length > 0 && !signal?.aborted) index.sortParts();
  // The ranges scanned beside this thread, in line order: their lines follow this thread's.
  let offset = reader.lines;
  for (const scan of scans) {
    if (signal?.aborted) break;
    const range: IdScanResult = await scan.result;
    segments.push({ firstLine: offset + 1, checkpoints: range.checkpoints });
    index.absorb(range.staged, offset);
    if (range.lines > 0) report.idsOnlyFrom ??= offset + 1;
    report.lines += range.good;
    report.total += range.total;
    for (const relative of range.numberedLines) {
      const line = offset + relative;
      hashLineNumber(line, hashed);
      index.stage(hashed[0]!, hashed[1]!, line);
      count(String(line));
    }
    for (const line of range.badLines) {
      report.problemCount++;
      count(`line:${offset + line}`);
    }
    for (const problem of range.problems) {
      if (problems.length < MAX_REPORTED) problems.push({ line: offset + problem.line, message: new InputLineError(offset + problem.line, problem.reason, problem.id).message });
    }
    offset += range.lines;
  }
  // The repeats among the lines read for ids only: each is a bad line instead of its id's item.
  index.resolve((line, id) => {
    report.problemCount++;
    if (repeats.length < MAX_REPORTED || line < repeats[repeats.length - 1]!.line) {
      repeats.push({ line, message: repeatedId(line, id).message });
      repeats.sort((a, b) => a.line - b.line);
      repeats.length = Math.min(repeats.length, MAX_REPORTED);
    }
    count(id, -1);
    count(`line:${line}`);
  });
  report.problems = [...problems, ...repeats].sort((a, b) => a.line - b.line).slice(0, MAX_REPORTED).map((p) => p.message);
  return report;
}
