/**
 * The stderr of `yiem batch` (src/cli/events/batch-sink.ts): on a terminal a progress bar redrawn
 * in place (done/total, failures, tokens, rate, ETA) with notes above it and the summary at the
 * end; in ndjson mode stamped batch events and, when asked, item events tagged with itemId;
 * nothing after batchEnd.
 */
import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { barText, createBatchSink } from "../../../src/cli/events/batch-sink.js";
import { inProcessHost, type CliIo } from "../../../src/cli/io.js";
import type { BatchProgressBody } from "../../../src/loop/batch-event-bodies.js";
import { progressOf } from "../../../src/batch/events.js";
import { emptyTally } from "../../../src/batch/runner.js";
import { createEventStamper } from "../../../src/loop/run-frame.js";
import { assertEventsValid } from "../../support/batch.js";

function fakeIo(tty: boolean): { io: CliIo; text: () => string } {
  const stderr = Object.assign(new PassThrough(), { isTTY: tty, columns: 100 });
  let text = "";
  stderr.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
  const io: CliIo = {
    stdin: new PassThrough(),
    stdinKind: "none",
    stdout: new PassThrough(),
    stderr,
    isTTY: { stdin: false, stdout: false, stderr: tty },
    env: { NO_COLOR: "1" },
    cwd: "/",
    signals: new EventEmitter(),
    host: inProcessHost(),
  };
  return { io, text: () => text };
}

const progress = (done: number, extra: Partial<BatchProgressBody> = {}): BatchProgressBody => ({
  type: "batchProgress", total: 100, done, ok: done - 1, error: 1, limit: 0, aborted: 0, running: 4, skipped: 0,
  usage: { promptTokens: 1000, completionTokens: 234, totalTokens: 1234 }, elapsedMs: 60_000, perMinute: done, etaMs: 90_000, ...extra,
});

describe("barText", () => {
  it("shows done/total, failures, tokens, rate and ETA, with a bar when there is room", () => {
    expect(barText(progress(50), 100)).toBe("[###############...............] 50/100 · 1 failed · 1,234 tokens · 50/min · ETA 1m 30s");
    expect(barText(progress(50), 40)).toBe("50/100 · 1 failed · 1,234 tokens · 50/min · ETA 1m 30s");
    expect(barText(progress(3, { total: null, etaMs: null }), 100)).toBe("3 done · 1 failed · 1,234 tokens · 3/min · ETA –");
    // Skipped items (--resume) are not to do.
    expect(barText(progress(10, { skipped: 80 }), 40)).toMatch(/^10\/20 /);
  });

  it("progressOf estimates the time left from the rate so far", () => {
    const tally = { ...emptyTally(), ok: 20, error: 5, skipped: 25 };
    expect(progressOf(tally, 100, 30_000)).toMatchObject({ done: 25, perMinute: 50, etaMs: 60_000 });
    expect(progressOf(emptyTally(), 100, 1_000).etaMs).toBeNull();
  });
});

describe("createBatchSink", () => {
  it("on a terminal: redraws one bar in place, notes and the summary above it, the bar cleared at the end", async () => {
    const { io, text } = fakeIo(true);
    const sink = createBatchSink(io, "batch-1", "pretty", false);
    sink.batch({ type: "batchStart", input: "in.jsonl", output: "out.jsonl", total: 100, skipped: 0, concurrency: 4, shard: { index: 2, count: 4, source: "JOB_COMPLETION_INDEX=1 (0-based), YIEM_SHARD_COUNT=4" }, resumed: false });
    sink.progress(progress(10), true);
    sink.progress(progress(11));
    sink.note("SIGINT: no new items start");
    sink.progress(progress(12), true);
    sink.batch({ type: "batchEnd", total: 100, ok: 11, error: 1, limit: 0, aborted: 0, skipped: 0, notRun: 88, usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 }, durationMs: 1500, exitCode: 130 });
    sink.progress(progress(13), true);
    await sink.close();
    const out = text();
    expect(out).toContain("batch: 100 items, 4 at a time, shard 2/4 (from JOB_COMPLETION_INDEX=1 (0-based), YIEM_SHARD_COUNT=4) → out.jsonl\n");
    expect(out).toContain("\r\x1b[2K[###...........................] 10/100 · 1 failed");
    // Throttled: the second draw came too soon.
    expect(out).not.toContain("11/100");
    expect(out).toContain("\r\x1b[2KSIGINT: no new items start\n\r\x1b[2K[####");
    expect(out).toContain("batch done in 1.5s: 11 ok, 1 error, 0 limit, 0 aborted, 0 skipped, 88 not run; 2 tokens; exit 130\n");
    expect(out).not.toContain("13/100");
  });

  it("ndjson: stamped batch events, item events tagged only when asked, nothing after batchEnd", async () => {
    const { io, text } = fakeIo(false);
    const sink = createBatchSink(io, "batch-2", "ndjson", true);
    const stamp = createEventStamper("run-of-item");
    sink.batch({ type: "warning", message: "careful" });
    sink.item(stamp({ type: "turnStart", turn: 1 }), "item-7");
    sink.progress(progress(1), true);
    sink.progress(progress(2));
    sink.batch({ type: "batchEnd", total: 1, ok: 1, error: 0, limit: 0, aborted: 0, skipped: 0, notRun: 0, usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 }, durationMs: 5, exitCode: 0 });
    sink.item(stamp({ type: "turnStart", turn: 2 }), "item-7");
    sink.batch({ type: "warning", message: "too late" });
    await sink.close();
    const events = text().trim().split("\n").map((line) => JSON.parse(line));
    assertEventsValid(events);
    expect(events.map((e) => [e.type, e.runId, e.seq, e.itemId])).toEqual([
      ["warning", "batch-2", 1, undefined],
      ["turnStart", "run-of-item", 1, "item-7"],
      ["batchProgress", "batch-2", 2, undefined],
      ["batchEnd", "batch-2", 3, undefined],
    ]);
    expect(Object.keys(events[1]).slice(0, 5)).toEqual(["type", "runId", "seq", "ts", "itemId"]);
  });
});
