/**
 * The bodies of `yiem batch`'s own events (docs/events.md, "Batch events"). They are not the
 * loop's: ../batch/ and the batch command build them. They live at the loop's layer only because
 * the one event union (`AgentEventBody`, ./types.ts), which every sink takes, lists them, and the
 * loop may not import the batch layer above it.
 */
import type { Usage } from "../tools/types.js";

/**
 * `yiem batch`'s own events (docs/events.md, "Batch events"; written by ../batch/ and the
 * command): stamped with the batch's id as runId. An item's run events carry `itemId` instead.
 */
export interface BatchStartBody {
  type: "batchStart";
  input: string;
  output: string;
  /** Items this batch (this shard) covers; null without the check pass. */
  total: number | null;
  /** Of those, already done (--resume). */
  skipped: number;
  concurrency: number;
  /** 1-based; `source` names what `--shard auto` read. */
  shard: { index: number; count: number; source?: string } | null;
  resumed: boolean;
}

export interface BatchProgressBody {
  type: "batchProgress";
  total: number | null;
  /** Items with a result in this run. */
  done: number;
  ok: number;
  error: number;
  limit: number;
  aborted: number;
  running: number;
  skipped: number;
  usage: Usage;
  costUsd?: number;
  elapsedMs: number;
  /** Items finished per minute so far. */
  perMinute: number;
  /** Estimated time left, ms; null while unknown. */
  etaMs: number | null;
}

export interface BatchEndBody {
  type: "batchEnd";
  /** Items this batch covers; null when it stopped before it could count them (a signal during the check pass or while stdin was read, or a stop of a `--no-check` batch before the input's end). */
  total: number | null;
  ok: number;
  error: number;
  limit: number;
  aborted: number;
  /** Items a `--resume` found already done, or another shard's. */
  skipped: number;
  /** Items of this batch that never started (a signal, the batch deadline, a failed write); null when `total` is. */
  notRun: number | null;
  usage: Usage;
  costUsd?: number;
  durationMs: number;
  exitCode: number;
  /** What ended the batch before or outside its items (a bad input, a failed write); absent when nothing did. */
  failure?: string;
}
