/**
 * The batch's own events (docs/events.md, "Batch events"), stamped with the batch's id as
 * `runId` and their own gap-free `seq` (the items' events keep their runs' ids and seqs, and
 * carry `itemId`).
 *
 * Rules:
 * - `batchStart` first: what will run (total, skipped, shard and where `--shard auto` found it).
 * - `batchProgress` at most once a second while items run (the sink throttles it, ../cli/events/batch-sink.ts), never after
 *   `batchEnd`; `batchEnd` once, last, with the summary and the exit code.
 */
import type { BatchEndBody, BatchProgressBody, BatchStartBody } from "../loop/batch-event-bodies.js";
import type { RunTally } from "./runner.js";

export const PROGRESS_EVERY_MS = 1000;

export type BatchEventBody = BatchStartBody | BatchProgressBody | BatchEndBody | { type: "warning"; message: string };

/** The progress body of `tally` after `elapsedMs`. */
export function progressOf(tally: RunTally, total: number | null, elapsedMs: number): BatchProgressBody {
  const done = tally.ok + tally.error + tally.limit + tally.aborted;
  const perMinute = elapsedMs > 0 ? (done * 60_000) / elapsedMs : 0;
  const left = total === null ? null : Math.max(0, total - tally.skipped - done);
  const etaMs = left === null || done === 0 ? null : Math.round((left * elapsedMs) / done);
  return {
    type: "batchProgress",
    total,
    done,
    ok: tally.ok,
    error: tally.error,
    limit: tally.limit,
    aborted: tally.aborted,
    running: tally.running,
    skipped: tally.skipped,
    usage: { ...tally.usage },
    ...(tally.costUsd !== undefined ? { costUsd: round6(tally.costUsd) } : {}),
    elapsedMs: Math.round(elapsedMs),
    perMinute: Math.round(perMinute * 10) / 10,
    etaMs,
  };
}

export function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
