/**
 * Running a batch (docs/batch.md): the check pass over the input, then the items, `concurrency`
 * at a time, each result handed to the one writer as it finishes.
 *
 * Rules:
 * - The check pass (`checkInput`) reads the whole input once, streamed, before anything runs,
 *   and keeps only the Set of ids: every line is parsed and prepared (a bad line, a template
 *   placeholder without a value, an id seen before), and the items this batch will run are
 *   counted. Bad lines are reported together (at most MAX_REPORTED), unless `skipBadLines`.
 * - The run pass (`runItems`) reads the input again, streamed, and applies the same rules in the
 *   same order; under `skipBadLines` (or without the check pass) a bad line becomes an error
 *   result with the id `line:N`, and a repeated id the same, so no id appears twice.
 * - An item runs when it belongs to this shard and the ledger has no final result for it.
 * - `stopStarting` aborted: no item starts any more (signals, the batch deadline); running items
 *   are the caller's to stop (their own signal).
 * - Results are counted into the summary as they are written; `usage` sums every item's.
 */
import { InputLineError, parseItem, readInputLines } from "./input.js";
import { shardOf, type Shard } from "./shard.js";
import type { BatchItem, BatchResult, BatchSummary } from "./types.js";
import { addUsage, zeroUsage } from "../tools/usage.js";

export const MAX_REPORTED = 10;

/** Where the items come from, and which of them this batch runs. */
export interface BatchSource {
  /** The input file (stdin is first copied to one by the caller). */
  file: string;
  shard?: Shard;
  /** Ids with a final result already (./ledger.ts). */
  done: ReadonlyMap<string, unknown>;
  /** Checks an item beyond its line (the template, its messages); throws an Error whose message says what is wrong. */
  prepare(item: BatchItem): void;
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
}

export type Entry = { item: BatchItem } | { bad: InputLineError; id: string };

/** The input's items and bad lines, in order, with a repeated id as a bad line (see module rules). */
export async function* entries(source: Pick<BatchSource, "file" | "prepare">): AsyncGenerator<Entry> {
  const seen = new Set<string>();
  for await (const line of readInputLines(source.file)) {
    let item: BatchItem | null;
    try {
      item = parseItem(line);
      if (item === null) continue;
      if (seen.has(item.id)) throw new InputLineError(item.line, `the id ${JSON.stringify(item.id)} is used by an earlier line too: ids must be unique`);
      seen.add(item.id);
      try {
        source.prepare(item);
      } catch (error) {
        throw new InputLineError(item.line, (error as Error).message, item.id);
      }
    } catch (error) {
      if (!(error instanceof InputLineError)) throw error;
      yield { bad: error, id: `line:${line.line}` };
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

/** The check pass (see module rules); `signal` ends it early (the report then counts what was read). */
export async function checkInput(source: BatchSource, signal?: AbortSignal): Promise<CheckReport> {
  const report: CheckReport = { total: 0, skipped: 0, lines: 0, problems: [], problemCount: 0 };
  for await (const entry of entries(source)) {
    if (signal?.aborted) break;
    report.lines++;
    if ("bad" in entry) {
      report.problemCount++;
      if (report.problems.length < MAX_REPORTED) report.problems.push(entry.bad.message);
    }
    const id = idOf(entry);
    if (!inShard(source, id)) continue;
    report.total++;
    if (source.done.has(id)) report.skipped++;
  }
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
  const iterator = entries(source)[Symbol.asyncIterator]();
  const next = async (): Promise<Entry | null> => {
    for (;;) {
      if (stopStarting.aborted) return null;
      const step = await iterator.next();
      if (step.done || stopStarting.aborted) return null;
      const id = idOf(step.value);
      if (!inShard(source, id)) continue;
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
