/**
 * `yiem batch --events github`: the batch's stderr as GitHub Actions workflow commands (the
 * command forms and escaping of ./github.ts, the batch's events of ../../batch/events.ts).
 *
 * Rules:
 * - `batchStart` is a `::notice::` saying what runs: items, concurrency, the shard and where
 *   `--shard auto` found it, the results file.
 * - Each item that fails (its `agentEnd` is not `completed`/`terminated`) is one `::error::`
 *   titled with its id and stop reason; an item's warnings and failed MCP servers are
 *   `::warning::`. An item's other events write nothing (10,000 items must not be 20,000 lines).
 * - `batchProgress` is a `::debug::` line at most every 10 s; the batch's own warnings are
 *   `::warning::`; `batchEnd` is a `::notice::` summary when the batch exits 0, an `::error::`
 *   (with the failure that ended it, if any) otherwise. Notes are `::notice::`.
 * - Nothing is written after `batchEnd`; writes never throw (./chunk-writer.ts).
 */
import type { AgentEvent } from "../../loop/types.js";
import type { BatchProgressBody } from "../../loop/batch-event-bodies.js";
import type { BatchEventBody } from "../../batch/events.js";
import type { CliIo } from "../io.js";
import type { BatchSink } from "./batch-sink-types.js";
import { createChunkWriter } from "./chunk-writer.js";
import { createGithubRenderer, workflowCommand } from "./github.js";

/** How often progress is written, at most. */
const PROGRESS_EVERY_MS = 10_000;

/** The item events worth an annotation. */
const ITEM_EVENTS = new Set<AgentEvent["type"]>(["agentEnd", "warning", "mcpServerError"]);


export function createGithubBatchSink(io: Pick<CliIo, "stderr" | "env" | "host">): BatchSink {
  const writer = createChunkWriter(io.stderr, { onExit: (callback) => io.host.onExit(callback) });
  const renderer = createGithubRenderer({ writer, env: io.env });
  let ended = false;
  let lastProgress = 0;
  const write = (line: string) => {
    if (!ended) writer.write(line);
  };
  return {
    batch(body) {
      if (ended) return;
      switch (body.type) {
        case "batchStart": {
          const total = body.total === null ? "items" : `${body.total} items`;
          const skipped = body.skipped > 0 ? `, ${body.skipped} already done` : "";
          const shard = body.shard ? `, shard ${body.shard.index}/${body.shard.count}${body.shard.source ? ` (from ${body.shard.source})` : ""}` : "";
          write(workflowCommand("notice", `${total}${skipped}, ${body.concurrency} at a time${shard} → ${body.output}`, { title: "yiem batch" }));
          return;
        }
        case "warning":
          write(workflowCommand("warning", body.message, { title: "yiem batch: warning" }));
          return;
        case "batchEnd": {
          const notRun = body.notRun === null ? " (stopped before the items were counted)" : body.notRun > 0 ? `, ${body.notRun} not run` : "";
          const cost = body.costUsd !== undefined ? `, $${body.costUsd}` : "";
          const counts = `${body.ok} ok, ${body.error} error, ${body.limit} limit, ${body.aborted} aborted, ${body.skipped} skipped${notRun}; ${body.usage.totalTokens} tokens${cost}; ${Math.round(body.durationMs)} ms`;
          if (body.exitCode === 0) write(workflowCommand("notice", counts, { title: "yiem batch done" }));
          else write(workflowCommand("error", body.failure ? `${body.failure}\n${counts}` : counts, { title: `yiem batch failed (exit ${body.exitCode})` }));
          ended = true;
          return;
        }
        default:
          return;
      }
    },
    progress(body, force) {
      const now = Date.now();
      if (ended || (!force && now - lastProgress < PROGRESS_EVERY_MS)) return;
      lastProgress = now;
      const total = body.total === null ? "" : `/${Math.max(0, body.total - body.skipped)}`;
      write(workflowCommand("debug", `yiem batch: ${body.done}${total} done, ${body.error + body.limit + body.aborted} failed, ${body.running} running, ${body.usage.totalTokens} tokens, ${body.perMinute}/min`));
    },
    item(event, itemId) {
      if (ended || !ITEM_EVENTS.has(event.type)) return;
      if (event.type === "agentEnd" && (event.stopReason === "completed" || event.stopReason === "terminated")) return;
      try {
        renderer.render({ ...event, itemId });
      } catch {
        // A malformed event must not crash the batch; the annotations simply skip it.
      }
    },
    itemEvents: true,
    note(message) {
      write(workflowCommand("notice", message));
    },
    close: () => writer.flush(),
  };
}
