/**
 * The shapes of `yiem batch` (docs/batch.md): an input item, a result line, the summary.
 *
 * Rules:
 * - An item's `id` is a non-empty string of at most 512 characters; ids are unique in an input.
 * - A result's `status` says what a later `--resume` does with its id: `ok`, `error` and `limit`
 *   are final (the id is skipped), `aborted` is not (the id runs again).
 */
import type { BatchEndBody } from "../loop/batch-event-bodies.js";
import type { StopReason } from "../loop/types.js";
import type { Usage } from "../tools/types.js";

/** One input line, parsed (./input.ts). */
export interface BatchItem {
  id: string;
  /** The 1-based line of the input it came from. */
  line: number;
  /** The prompt text (object and plain-string lines). */
  prompt?: string;
  /** An OpenAI batch-request line's `body.messages`, as given (the command turns them into messages). */
  messages?: unknown[];
  /** Text appended to the prompt as context, as piped stdin is for `yiem run`. */
  stdin?: string;
  /** Files added to the prompt, as `--attach` (relative to the current folder). */
  attachments?: string[];
  /** Values for the `{{name}}` placeholders of `--prompt-template`. */
  vars?: Record<string, unknown>;
}

export type BatchStatus = "ok" | "error" | "limit" | "aborted";

/** The statuses `--resume` skips. */
export const FINAL_STATUSES: ReadonlySet<BatchStatus> = new Set(["ok", "error", "limit"]);

/** One line of the results file (docs/batch.md, "Results"). */
export interface BatchResult {
  id: string;
  /** The item's run; null for an item that never ran (a bad line under --skip-bad-lines). */
  runId: string | null;
  status: BatchStatus;
  stopReason: StopReason;
  text: string;
  /** With an output schema: the answer's value (null when the run ended without a valid one). */
  structured?: unknown;
  usage: Usage;
  costUsd?: number;
  durationMs: number;
  error?: string;
  /** The input line, for a bad line (its id is then `line:N`). */
  line?: number;
}

/** What a batch did: the `batchEnd` event's counts, usage and time (docs/events.md), without what only the CLI adds. */
export type BatchSummary = Omit<BatchEndBody, "type" | "notRun" | "exitCode" | "failure">;

/** The status of a run that ended with `stopReason`. */
export function statusOf(stopReason: StopReason): BatchStatus {
  switch (stopReason) {
    case "completed":
    case "terminated":
      return "ok";
    case "aborted":
      return "aborted";
    case "error":
      return "error";
    default:
      return "limit";
  }
}
