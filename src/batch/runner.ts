/**
 * Running a batch (docs/batch.md): the check pass over the input, then the items, `concurrency`
 * at a time, each result handed to the one writer as it finishes.
 *
 * Rules:
 * - The check pass (`checkInput`) reads the whole input once, streamed, before anything runs,
 *   and keeps only the ids (./staged-ids.ts): every line's id is read and repeated ids are found,
 *   and the items this batch will run are counted. The lines of the first `fullCheckBytes` bytes,
 *   at most `fullCheckLines` of them, are also parsed and prepared whole (a bad line, a template placeholder without a value; their
 *   repeats found at once, ./id-index.ts); past them only the id is read, from the line's bytes
 *   (./line-id.ts), and staged, so a big input starts at once. Without a ledger, a big input's
 *   bytes past `fullCheckBytes` are shared with a worker thread (./range-scan.ts, ./id-scan.ts:
 *   its range cut after a `\n`, its line numbers offset by the lines before it, its staged ids
 *   absorbed), which may be started before the source is ready (`startIdRangeScans`). Bad lines
 *   are reported together, in line order (at most MAX_REPORTED), unless `skipBadLines`.
 * - A bad line is counted, and belongs to a shard, by the id it names when that id can be read
 *   (the parse got that far, or the fast path reads it: what the check counted for a line read
 *   for its id only), else by `line:N`; its result is `line:N` either way. So the check's total
 *   is the run pass's, also when the run pass finds a line bad that the check read the id of.
 * - The run pass (`runItems`) reads the input again, streamed, and applies the same rules in the
 *   same order, every line parsed and prepared whole; under `skipBadLines` (or without the check
 *   pass) a bad line becomes an error result with the id `line:N`, and a repeated id the same, so
 *   no id appears twice. After a check, a line whose id is not the one the check counted for it
 *   is a bad line too (the input changed, or the fast path misread it).
 * - An item runs when it belongs to this shard and the ledger has no final result for it.
 * - `stopStarting` aborted: no item starts any more (signals, the batch deadline); running items
 *   are the caller's to stop (their own signal).
 * - Results are counted into the summary as they are written; `usage` sums every item's.
 */
import { InputLineError, parseItem } from "./input.js";
import { hashId, hashLineNumber, IdIndex, type IdOwners } from "./id-index.js";
import { partitionsFor, StagedIds } from "./staged-ids.js";
import { fastLineId, IdSpanReader, lineId, spanIdAt } from "./line-id.js";
import { LineReader, lineInSegments, textLines, type LineSegment, type LineVisitor } from "./lines.js";
import { createBulkScanner, type BulkSink } from "./bulk-scan.js";
import { MAX_REPORTED, stageIdOnly, type IdScanResult } from "./id-scan.js";
import { ID_RANGE_BYTES, idRanges, startRangeScan, type RangeScan } from "./range-scan.js";
import { shardOf, type Shard } from "./shard.js";
import type { BatchItem, BatchResult, BatchSummary } from "./types.js";
import { addUsage, zeroUsage } from "../tools/usage.js";
import { stat } from "node:fs/promises";
import { statSync } from "node:fs";

/** The bytes at the start of an input whose lines the check pass parses whole (see module rules). */
export const FULL_CHECK_BYTES = 32 * 1024 * 1024;
/**
 * ... and at most this many lines: parsing and preparing a line whole costs about the same
 * whatever its length (~2.5 µs for a 100-byte line on the 2-core machine, docs/performance.md),
 * so the bytes alone would give an input of short lines a check several times longer.
 */
export const FULL_CHECK_LINES = 100_000;

/** Where the items come from, and which of them this batch runs. */
export interface BatchSource {
  /** The input file (stdin is first copied to one by the caller). */
  file: string;
  shard?: Shard;
  /** Ids with a final result already (./ledger.ts). */
  done: ReadonlyMap<string, unknown>;
  /** Checks an item beyond its line (the template, its messages); throws an Error whose message says what is wrong. */
  prepare(item: BatchItem): void;
  /** The check pass parses the lines of this many first bytes whole (default FULL_CHECK_BYTES; Infinity: every line)... */
  fullCheckBytes?: number;
  /** ... and of at most this many first lines (default FULL_CHECK_LINES; Infinity: no limit). */
  fullCheckLines?: number;
  /** The least bytes of a range scanned beside this thread (default ID_RANGE_BYTES). */
  idRangeBytes?: number;
  /** Ranges started before the source was ready (`startIdRangeScans`, so that the worker's start and scan overlap the spec's loading); used when they still fit the input. */
  rangeScans?: RangeScan[];
}

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

/** An item, or a bad line: recorded as `id` (`line:N`), counted in the shard of `key` (see module rules). */
export type Entry = { item: BatchItem } | { bad: InputLineError; id: string; key: string };

/** The id of line `line` of `file`, read again from `reader`'s checkpoints (only to tell two ids of one hash apart). */
function idReader(file: string, segments: readonly LineSegment[]): (line: number) => string | undefined {
  return (line) => {
    try {
      const bytes = lineInSegments(file, line, segments);
      return bytes ? lineId(bytes, 0, bytes.length, line) ?? undefined : undefined;
    } catch {
      return undefined;
    }
  };
}

/**
 * The id a bad line is counted and sharded by (see module rules): the id the line names when it
 * can be read (the parse got that far, or the check's fast path reads it), else `line:N`.
 */
function badLineKey(error: InputLineError, bytes: Buffer, start: number, end: number): string {
  if (error.id !== undefined) return error.id;
  return fastLineId(bytes, start, end, error.line) ?? `line:${error.line}`;
}

function repeatedId(line: number, id: string): InputLineError {
  return new InputLineError(line, `the id ${JSON.stringify(id)} is used by an earlier line too: ids must be unique`);
}

/**
 * The input's items and bad lines, in order, with a repeated id as a bad line (see module rules).
 * `checked`: the check pass's ids; each line's id must be the one it counted for that line.
 */
export async function* entries(source: Pick<BatchSource, "file" | "prepare">, checked?: IdOwners): AsyncGenerator<Entry> {
  const reader = await LineReader.open(source.file, undefined, { soon: true });
  /** Without a check, the run pass finds the repeats itself. */
  const index = checked ? undefined : new IdIndex(idReader(source.file, [{ firstLine: 1, checkpoints: reader.checkpoints }]));
  for await (const input of textLines(reader)) {
    let item: BatchItem | null;
    const lineKey = `line:${input.line}`;
    let key = lineKey;
    try {
      try {
        item = parseItem(input);
      } catch (error) {
        if (error instanceof InputLineError && "text" in input) {
          const bytes = Buffer.from(input.text);
          key = badLineKey(error, bytes, 0, bytes.length);
        }
        throw error;
      }
      if (item === null) continue;
      if (checked) {
        const owner = checked.owner(item.id, item.line);
        if (owner >= 0 && owner < item.line) throw repeatedId(item.line, item.id);
        if (owner !== item.line) throw new InputLineError(item.line, "this id is not the one the check pass read from this line (was the input changed while the batch ran?)", item.id);
      } else if (!index!.add(item.id, item.line)) throw repeatedId(item.line, item.id);
      try {
        source.prepare(item);
      } catch (error) {
        key = item.id;
        throw new InputLineError(item.line, (error as Error).message, item.id);
      }
    } catch (error) {
      if (!(error instanceof InputLineError)) throw error;
      yield { bad: error, id: lineKey, key };
      continue;
    }
    yield { item };
  }
}

/** The id an entry is recorded under: the item's, or `line:N` for a bad line. */
export function idOf(entry: Entry): string {
  return "item" in entry ? entry.item.id : entry.id;
}

function inShard(source: BatchSource, id: string): boolean {
  return !source.shard || source.shard.count === 1 || shardOf(id, source.shard.count) === source.shard.index;
}

/** The range scans of the check pass of `file` with the default `fullCheckBytes` and without a ledger, started now (see BatchSource.rangeScans); none when the file cannot be read. */
export function startIdRangeScans(file: string, shard?: Shard): RangeScan[] {
  try {
    const size = statSync(file).size;
    const partitions = partitionsFor(size);
    return idRanges(file, FULL_CHECK_BYTES, size, ID_RANGE_BYTES).map((range) => startRangeScan({ file, range, partitions, ...(shard ? { shard } : {}) }));
  } catch {
    return [];
  }
}

/** The check pass (see module rules); `signal` ends it early (the report then counts what was read). */
export async function checkInput(source: BatchSource, signal?: AbortSignal): Promise<CheckReport> {
  const size = (await stat(source.file)).size;
  const fullBytes = source.fullCheckBytes ?? FULL_CHECK_BYTES;
  const partitions = partitionsFor(size);
  // With a ledger the counts need every id as a string: scanned here alone.
  const ranges = source.done.size === 0 ? idRanges(source.file, fullBytes, size, source.idRangeBytes ?? ID_RANGE_BYTES) : [];
  const early = source.rangeScans ?? [];
  const fits = early.length === ranges.length && early.every((scan, k) => scan.partitions === partitions && scan.range.start === ranges[k]!.start && scan.range.end === ranges[k]!.end);
  if (!fits) for (const scan of early) scan.cancel();
  const scans: RangeScan[] = fits ? early : ranges.map((range) => startRangeScan({ file: source.file, range, partitions, ...(source.shard ? { shard: source.shard } : {}) }));
  try {
    return await checkWithRanges(source, size, fullBytes, source.fullCheckLines ?? FULL_CHECK_LINES, partitions, scans, signal);
  } finally {
    for (const scan of scans) scan.cancel();
  }
}

async function checkWithRanges(source: BatchSource, size: number, fullBytes: number, fullLines: number, partitions: number, scans: RangeScan[], signal?: AbortSignal): Promise<CheckReport> {
  const mainEnd = scans[0]?.range.start ?? size;
  const bulk = createBulkScanner();
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
        if (id === null) return;
        if (!needsIds) {
          report.lines++;
          report.total++;
        } else count(id);
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
    const sink: BulkSink = {
      span(buffer, line, a, b, start) {
        index.stage(a, b, line);
        if (!needsIds) {
          report.lines++;
          report.total++;
        } else count(spanIdAt(buffer, start));
      },
      other: (buffer, line, start, end, offset) => visitor.line(buffer, start, end, line, offset),
    };
    visitor.lines = (buffer, start, stop, firstLine, base, checkpoints) => {
      if (base + start <= fullBytes && firstLine <= fullLines) return undefined;
      report.idsOnlyFrom ??= firstLine;
      return bulk.lines(buffer, start, stop, firstLine, base, checkpoints, sink);
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

export interface RunItemsOptions {
  source: BatchSource;
  concurrency: number;
  /** Runs one item; never rejects (a failure is an error result). */
  runItem(item: BatchItem): Promise<BatchResult>;
  /** The result of a bad line (under skipBadLines, or without the check pass). */
  badLine(error: InputLineError, id: string): BatchResult;
  /** Receives every result as it finishes (the writer). */
  onResult(result: BatchResult): void;
  onStart?(item: BatchItem): void;
  stopStarting: AbortSignal;
  /** The check pass's ids (its report's `index`), when it ran. */
  checked?: IdOwners;
}

export interface RunTally extends Omit<BatchSummary, "durationMs" | "total"> {
  /** Items of this shard seen so far by the run pass. */
  seen: number;
  running: number;
}

export function emptyTally(): RunTally {
  return { seen: 0, ok: 0, error: 0, limit: 0, aborted: 0, skipped: 0, running: 0, usage: zeroUsage() };
}

/** Counts one result into `tally`. */
export function countResult(tally: RunTally, result: BatchResult): void {
  tally[result.status]++;
  addUsage(tally.usage, result.usage);
  if (result.costUsd !== undefined) tally.costUsd = (tally.costUsd ?? 0) + result.costUsd;
}

/** The run pass (see module rules); resolves when every started item has its result. */
export async function runItems(options: RunItemsOptions, tally: RunTally): Promise<void> {
  const { source, stopStarting } = options;
  const iterator = entries(source, options.checked)[Symbol.asyncIterator]();
  const next = async (): Promise<Entry | null> => {
    for (;;) {
      if (stopStarting.aborted) return null;
      const step = await iterator.next();
      if (step.done || stopStarting.aborted) return null;
      const id = idOf(step.value);
      if (!inShard(source, "bad" in step.value ? step.value.key : id)) continue;
      tally.seen++;
      if (source.done.has(id)) {
        tally.skipped++;
        continue;
      }
      return step.value;
    }
  };
  const finish = (result: BatchResult) => {
    countResult(tally, result);
    options.onResult(result);
  };
  const worker = async () => {
    for (let entry = await next(); entry; entry = await next()) {
      if ("bad" in entry) {
        finish(options.badLine(entry.bad, entry.id));
        continue;
      }
      tally.running++;
      options.onStart?.(entry.item);
      const result = await options.runItem(entry.item);
      tally.running--;
      finish(result);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  } finally {
    await iterator.return?.(undefined);
  }
}
