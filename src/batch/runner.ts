/**
 * Running a batch (docs/batch.md): the items, `concurrency` at a time, each result handed to the
 * one writer as it finishes, after the check pass over the input (./check-pass.ts); the rules both
 * passes share.
 *
 * Rules:
 * - The check pass (./check-pass.ts `checkInput`) runs first, unless `--no-check`.
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
import { IdIndex, type IdOwners } from "./id-index.js";
import { fastLineId, lineId } from "./line-id.js";
import { LineReader, lineInSegments, textLines, type LineSegment } from "./lines.js";
import type { RangeScan } from "./range-scan.js";
import { shardOf, type Shard } from "./shard.js";
import type { BatchItem, BatchResult, BatchSummary } from "./types.js";
import { addUsage, zeroUsage } from "../tools/usage.js";

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
  /** Ranges started before the source was ready (before the CLI loaded, ../cli/early-scan.ts, else `startIdRangeScans`, so that the worker's start and scan overlap the batch's start-up); used when they still fit the input (same file, shard, parts and ranges). */
  rangeScans?: RangeScan[];
}

/** An item, or a bad line: recorded as `id` (`line:N`), counted in the shard of `key` (see module rules). */
export type Entry = { item: BatchItem } | { bad: InputLineError; id: string; key: string };

/** The id of line `line` of `file`, read again from `reader`'s checkpoints (only to tell two ids of one hash apart). */
export function idReader(file: string, segments: readonly LineSegment[]): (line: number) => string | undefined {
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
export function badLineKey(error: InputLineError, bytes: Buffer, start: number, end: number): string {
  if (error.id !== undefined) return error.id;
  return fastLineId(bytes, start, end, error.line) ?? `line:${error.line}`;
}

export function repeatedId(line: number, id: string): InputLineError {
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

export function inShard(source: BatchSource, id: string): boolean {
  return !source.shard || source.shard.count === 1 || shardOf(id, source.shard.count) === source.shard.index;
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
  /** Of the skipped items (`--resume`), those whose earlier result is `error` / `limit`: they count for the exit code as this run's own do. */
  skippedError: number;
  skippedLimit: number;
  /** Whether the run pass read the input to its end (so `seen` is every item of this shard). */
  reachedEnd: boolean;
}

export function emptyTally(): RunTally {
  return { seen: 0, ok: 0, error: 0, limit: 0, aborted: 0, skipped: 0, running: 0, usage: zeroUsage(), skippedError: 0, skippedLimit: 0, reachedEnd: false };
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
      if (step.done) tally.reachedEnd = true;
      if (step.done || stopStarting.aborted) return null;
      const id = idOf(step.value);
      if (!inShard(source, "bad" in step.value ? step.value.key : id)) continue;
      tally.seen++;
      const earlier = source.done.get(id);
      if (earlier !== undefined) {
        tally.skipped++;
        if (earlier === "error") tally.skippedError++;
        else if (earlier === "limit") tally.skippedLimit++;
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
