/**
 * The stderr of `yiem batch` (docs/batch.md, "Progress"): the one writer of stderr while a batch
 * runs.
 *
 * Rules:
 * - `ndjson` (the default when stderr is not a terminal): the batch's events (batchStart,
 *   batchProgress at most once a second, warnings, batchEnd), stamped with the batch's id;
 *   with `--events ndjson` given, also every item's events, each with `itemId`.
 * - `pretty` (the default on a terminal): one progress bar redrawn in place (done/total,
 *   failures, tokens, rate, ETA), notes as lines above it, and the summary at the end. Off a
 *   terminal, `pretty` writes the notes, a progress line at most every 10 s, and the summary.
 * - `github`: GitHub Actions workflow commands (./github-batch.ts).
 * - `none`: nothing.
 * - Nothing is written after batchEnd; writes never throw (./sink.ts, ./chunk-writer.ts).
 */
import type { AgentEvent } from "../../loop/types.js";
import { createEventStamper } from "../../loop/run-frame.js";
import type { BatchEventBody } from "../../batch/events.js";
import type { BatchEndBody, BatchProgressBody } from "../../loop/batch-event-bodies.js";
import { PROGRESS_EVERY_MS } from "../../batch/events.js";
import type { CliIo } from "../io.js";
import { createChunkWriter } from "./chunk-writer.js";
import { createGithubBatchSink } from "./github-batch.js";
import type { BatchSink } from "./batch-sink-types.js";
import { createCallSink, type EventsMode } from "./sink.js";
import { sanitizeForTerminal } from "./sanitize.js";
import { createStyle, formatCount, formatDuration, shouldUseColor } from "./style.js";


const BAR_EVERY_MS = 200;
const PLAIN_EVERY_MS = 10_000;
const CLEAR_LINE = "\r\x1b[2K";

export function createBatchSink(io: CliIo, batchId: string, mode: EventsMode, itemEvents: boolean): BatchSink {
  if (mode === "none") return { batch() {}, progress() {}, item() {}, itemEvents: false, note() {}, close: () => Promise.resolve() };
  if (mode === "github") return createGithubBatchSink(io);
  let ended = false;
  let lastProgress = 0;
  if (mode === "ndjson") {
    const sink = createCallSink(io, "ndjson");
    const stamp = createEventStamper(batchId);
    const emit = (body: BatchEventBody) => sink.emit(stamp(body));
    return {
      batch(body) {
        if (ended) return;
        if (body.type === "batchEnd") ended = true;
        emit(body);
      },
      progress(body, force) {
        const now = Date.now();
        if (ended || (!force && now - lastProgress < PROGRESS_EVERY_MS)) return;
        lastProgress = now;
        emit(body);
      },
      item(event, itemId) {
        if (ended || !itemEvents) return;
        const { type, runId, seq, ts, ...rest } = event;
        sink.emit({ type, runId, seq, ts, itemId, ...rest } as AgentEvent);
      },
      itemEvents,
      note() {},
      close: () => sink.close(),
    };
  }
  const tty = io.isTTY.stderr;
  const writer = createChunkWriter(io.stderr, { onExit: (callback) => io.host.onExit(callback) });
  const style = createStyle(shouldUseColor(tty, io.env));
  let barShown = false;
  const clearBar = () => {
    if (barShown) writer.write(CLEAR_LINE);
    barShown = false;
  };
  const line = (text: string) => {
    clearBar();
    writer.write(`${text}\n`);
  };
  return {
    batch(body) {
      if (ended) return;
      if (body.type === "batchStart") {
        const shard = body.shard ? `, shard ${body.shard.index}/${body.shard.count}${body.shard.source ? ` (from ${body.shard.source})` : ""}` : "";
        const total = body.total === null ? "items" : `${formatCount(body.total)} items`;
        const skipped = body.skipped > 0 ? `, ${formatCount(body.skipped)} already done` : "";
        line(style.dim(`batch: ${total}${skipped}, ${body.concurrency} at a time${shard} → ${sanitizeForTerminal(body.output)}`));
      } else if (body.type === "warning") line(style.yellow(`warning: ${sanitizeForTerminal(body.message)}`));
      else if (body.type === "batchEnd") {
        ended = true;
        line(summaryLine(body, style));
      }
    },
    progress(body, force) {
      const now = Date.now();
      if (ended || (!force && now - lastProgress < (tty ? BAR_EVERY_MS : PLAIN_EVERY_MS))) return;
      lastProgress = now;
      const text = barText(body, tty ? Math.min(io.stderr.columns ?? 80, 120) : 80);
      if (!tty) {
        writer.write(`${text}\n`);
        return;
      }
      writer.write(`${CLEAR_LINE}${text}`);
      barShown = true;
    },
    item() {},
    itemEvents: false,
    note(message) {
      line(style.dim(sanitizeForTerminal(message)));
    },
    close() {
      clearBar();
      return writer.flush();
    },
  };
}

/** The progress bar: `[####......] 512/1,000 · 3 failed · 1.2M tokens · 42/min · ETA 3m12s`. */
export function barText(p: BatchProgressBody, columns: number): string {
  const failed = p.error + p.limit + p.aborted;
  const todo = p.total === null ? null : Math.max(0, p.total - p.skipped);
  const parts = [
    todo === null ? `${formatCount(p.done)} done` : `${formatCount(p.done)}/${formatCount(todo)}`,
    `${formatCount(failed)} failed`,
    `${formatCount(p.usage.totalTokens)} tokens`,
    `${p.perMinute}/min`,
    p.etaMs === null ? "ETA –" : `ETA ${formatDuration(p.etaMs)}`,
  ];
  const text = parts.join(" · ");
  const room = columns - text.length - 4;
  if (todo === null || room < 10) return text;
  const width = Math.min(30, room);
  const filled = todo === 0 ? width : Math.round((p.done / todo) * width);
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${text}`;
}

function summaryLine(end: BatchEndBody, style: ReturnType<typeof createStyle>): string {
  const cost = end.costUsd !== undefined ? `, $${end.costUsd}` : "";
  const notRun = end.notRun === null ? " (stopped before the items were counted)" : end.notRun > 0 ? `, ${formatCount(end.notRun)} not run` : "";
  const text = `batch done in ${formatDuration(end.durationMs)}: ${formatCount(end.ok)} ok, ${formatCount(end.error)} error, ${formatCount(end.limit)} limit, ${formatCount(end.aborted)} aborted, ${formatCount(end.skipped)} skipped${notRun}; ${formatCount(end.usage.totalTokens)} tokens${cost}; exit ${end.exitCode}`;
  return end.exitCode === 0 ? style.green(text) : style.red(text);
}
