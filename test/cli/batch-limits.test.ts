/**
 * `yiem batch` limits and modes through the CLI (in-process): per-item --timeout (limit, exit 3),
 * --batch-timeout (running items aborted, the rest not run, exit 3), a signal (no item starts
 * after it), --no-check (starts without the check pass; a bad line becomes its error result),
 * per-item attachments, batchProgress at most once a second, and the pretty view off a terminal.
 */
import { rm, writeFile } from "node:fs/promises";
import type { EventEmitter } from "node:events";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { startChatServer } from "../support/chat-server.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import type { CliResult } from "../support/cli.js";
import { assertBatchStream, useBatchProject, itemReply, objectLines, promptOf, readResults } from "../support/batch.js";

const fixture = useBatchProject();

function yiem(args: string[], options: Parameters<typeof runCliInProcess>[1] = {}): Promise<CliResult> {
  return runCliInProcess(["batch", ...args], { cwd: fixture.dir, env: { TEST_BASE_URL: fixture.server?.url ?? "http://127.0.0.1:9/v1", TEST_API_KEY: "sk-limits" }, timeoutMs: 60_000, ...options });
}

/** An `onSignals` that emits SIGINT once the server has received `requests` requests. */
function sigintAfterRequests(requests: number): (signals: EventEmitter) => void {
  return (signals) => {
    const timer = setInterval(() => {
      if (fixture.server!.received.length < requests) return;
      clearInterval(timer);
      signals.emit("SIGINT");
    }, 10);
  };
}

/** Answers at once, except prompts containing "slow" (after `ms`). */
const slowServer = (ms: number) => startChatServer(async (request) => {
  if (promptOf(request).includes("slow")) await sleep(ms);
  return itemReply(request);
});

describe("limits", () => {
  it("--timeout ends a slow item `limit` (stopReason timeout) and the batch exits 3", async () => {
    fixture.server = await slowServer(10_000);
    await writeFile(join(fixture.dir, "t.jsonl"), ["fast one", "slow one"].join("\n"));
    const file = join(fixture.dir, "t-out.jsonl");
    const r = await yiem(["t.jsonl", "-o", file, "--timeout", "2s"]);
    expect(r.code, r.stderr).toBe(3);
    const byId = Object.fromEntries((await readResults(file)).map((x) => [x.id, x]));
    expect(byId["1"]).toMatchObject({ status: "ok" });
    expect(byId["2"]).toMatchObject({ status: "limit", stopReason: "timeout" });
  });

  it("--batch-timeout: running items are recorded aborted, the rest never start, exit 3", async () => {
    fixture.server = await slowServer(5000);
    await writeFile(join(fixture.dir, "bt.jsonl"), ["a quick", "b slow", "c slow", "d slow", "e slow"].join("\n"));
    const file = join(fixture.dir, "bt-out.jsonl");
    const r = await yiem(["bt.jsonl", "-o", file, "-j", "2", "--batch-timeout", "500ms"]);
    expect(r.code, r.stderr).toBe(3);
    const results = await readResults(file);
    const aborted = results.filter((x) => x.status === "aborted");
    expect(aborted.length).toBeGreaterThanOrEqual(1);
    expect(aborted[0].error).toBe("the batch timed out after 500 ms (--batch-timeout)");
    const end = r.events.at(-1)!;
    expect(end).toMatchObject({ type: "batchEnd", exitCode: 3, total: 5, aborted: aborted.length });
    expect(end.notRun).toBe(5 - results.length);
    expect(Number(end.notRun)).toBeGreaterThanOrEqual(2);
  });

  it("a signal during the batch: no item starts after it, exit 130", async () => {
    fixture.server = await slowServer(400);
    await writeFile(join(fixture.dir, "sig.jsonl"), objectLines(8).replace(/question/g, "slow question"));
    const file = join(fixture.dir, "sig-out.jsonl");
    // Once both running items' requests reached the fixture.server.
    const r = await yiem(["sig.jsonl", "-o", file, "-j", "2", "--grace", "5s"], { onSignals: sigintAfterRequests(2) });
    expect(r.code).toBe(130);
    const results = await readResults(file);
    // The two running items finished within the grace; nothing else started.
    expect(results.map((x) => x.status)).toEqual(["ok", "ok"]);
    expect(fixture.server.received).toHaveLength(2);
    expect(r.events.at(-1)).toMatchObject({ type: "batchEnd", exitCode: 130, ok: 2, notRun: 6 });
  });
});

describe("a signal before the items are all counted", () => {
  it("during the check pass: nothing starts, exit 143, batchEnd's total and notRun are null (not the part the check had read)", async () => {
    fixture.server = await startChatServer((request) => itemReply(request));
    await writeFile(join(fixture.dir, "sig-check.jsonl"), objectLines(20_000));
    const r = await yiem(["sig-check.jsonl", "-o", join(fixture.dir, "sig-check-out.jsonl"), "--full-check"], { onSignals: (signals) => setImmediate(() => signals.emit("SIGTERM")) });
    expect(r.code).toBe(143);
    expect(fixture.server.received).toHaveLength(0);
    expect(r.events.at(-1)).toMatchObject({ type: "batchEnd", exitCode: 143, total: null, notRun: null, ok: 0 });
    assertBatchStream(r.events, { started: false });
  });

  it("--no-check, stopped before the input's end: total and notRun are null; read to its end, they are counted", async () => {
    fixture.server = await startChatServer(async (request) => {
      await sleep(50);
      return itemReply(request);
    });
    await writeFile(join(fixture.dir, "sig-nc.jsonl"), objectLines(8));
    const stopped = await yiem(["sig-nc.jsonl", "-o", join(fixture.dir, "sig-nc-out.jsonl"), "--no-check", "-j", "2"], { onSignals: sigintAfterRequests(2) });
    expect(stopped.code).toBe(130);
    expect(stopped.events.at(-1)).toMatchObject({ type: "batchEnd", exitCode: 130, ok: 2, total: null, notRun: null });
    const whole = await yiem(["sig-nc.jsonl", "-o", join(fixture.dir, "sig-nc-whole.jsonl"), "--no-check", "-j", "4"]);
    expect(whole.code).toBe(0);
    expect(whole.events.at(-1)).toMatchObject({ type: "batchEnd", total: 8, ok: 8, notRun: 0 });
  });
});

describe("modes", () => {
  it("--no-check starts without the check pass: total unknown, a bad line becomes its error result", async () => {
    fixture.server = await startChatServer((request) => itemReply(request));
    await writeFile(join(fixture.dir, "nc.jsonl"), ["good", "{bad", "fine"].join("\n"));
    const file = join(fixture.dir, "nc-out.jsonl");
    const r = await yiem(["nc.jsonl", "-o", file, "--no-check"]);
    expect(r.code).toBe(1);
    expect(r.events[0]).toMatchObject({ type: "batchStart", total: null });
    const byId = Object.fromEntries((await readResults(file)).map((x) => [x.id, x]));
    expect(Object.keys(byId).sort()).toEqual(["1", "3", "line:2"]);
    expect(byId["line:2"]).toMatchObject({ status: "error", line: 2 });
    expect(r.events.at(-1)).toMatchObject({ type: "batchEnd", total: 3, ok: 2, error: 1 });
  });

  it("adds an item's attachments to its prompt; a missing one is that item's error", async () => {
    fixture.server = await startChatServer((request) => itemReply(request));
    await writeFile(join(fixture.dir, "notes.txt"), "the notes\n");
    await writeFile(join(fixture.dir, "att.jsonl"), [JSON.stringify({ id: "with", prompt: "read this", attachments: ["notes.txt"] }), JSON.stringify({ id: "gone", prompt: "and this", attachments: ["missing.txt"] })].join("\n"));
    const file = join(fixture.dir, "att-out.jsonl");
    const r = await yiem(["att.jsonl", "-o", file]);
    expect(r.code).toBe(1);
    const byId = Object.fromEntries((await readResults(file)).map((x) => [x.id, x]));
    expect(byId.with.text).toBe("done: read this\n\nAttachment: notes.txt\n```\nthe notes\n```");
    expect(byId.gone).toMatchObject({ status: "error", runId: expect.any(String) });
    expect(byId.gone.error).toContain('attachment "missing.txt" not found');
  });

  it("reads the --attach files once per batch: a file changed while the batch runs gives every item the same bytes", async () => {
    const shared = join(fixture.dir, "shared.txt");
    await writeFile(shared, "as it was\n");
    let changed = false;
    fixture.server = await startChatServer(async (request) => {
      if (!changed) {
        changed = true;
        await writeFile(shared, "changed\n");
      }
      return itemReply(request);
    });
    await writeFile(join(fixture.dir, "shared.jsonl"), ["a", "b", "c"].map((id) => JSON.stringify({ id, prompt: `item ${id}` })).join("\n"));
    const file = join(fixture.dir, "shared-out.jsonl");
    const r = await yiem(["shared.jsonl", "-o", file, "--attach", "shared.txt", "--concurrency", "1"]);
    expect(r.code, r.stderr).toBe(0);
    expect(changed).toBe(true);
    const texts = (await readResults(file)).map((x) => x.text).sort();
    expect(texts).toEqual(["a", "b", "c"].map((id) => `done: item ${id}\n\nAttachment: shared.txt\n\`\`\`\nas it was\n\`\`\``));
  });

  it("refuses an item's attachment outside the current folder (a path up, an absolute path, a link out)", async () => {
    fixture.server = await startChatServer((request) => itemReply(request));
    const { basename, dirname } = await import("node:path");
    const { symlink } = await import("node:fs/promises");
    const outside = join(dirname(fixture.dir), `${basename(fixture.dir)}-outside.txt`);
    await writeFile(outside, "a secret\n");
    await symlink(outside, join(fixture.dir, "link-out.txt"));
    try {
      await writeFile(join(fixture.dir, "esc.jsonl"), [[`../${basename(outside)}`], [outside], ["link-out.txt"]].map((attachments, i) => JSON.stringify({ id: `e${i}`, prompt: "p", attachments })).join("\n"));
      const file = join(fixture.dir, "esc-out.jsonl");
      const r = await yiem(["esc.jsonl", "-o", file]);
      expect(r.code).toBe(1);
      const results = await readResults(file);
      expect(results).toHaveLength(3);
      for (const x of results) expect(x).toMatchObject({ status: "error", error: expect.stringContaining("is outside the current folder") });
    } finally {
      await rm(outside, { force: true });
    }
    expect(fixture.server.received).toHaveLength(0);
  });

  it("writes batchProgress at most once a second (and once more before batchEnd)", async () => {
    fixture.server = await startChatServer(async (request) => {
      await sleep(120);
      return itemReply(request);
    });
    await writeFile(join(fixture.dir, "p.jsonl"), objectLines(24));
    const r = await yiem(["p.jsonl", "-o", join(fixture.dir, "p-out.jsonl"), "-j", "1"]);
    expect(r.code, r.stderr).toBe(0);
    assertBatchStream(r.events);
    const progress = r.events.filter((e) => e.type === "batchProgress");
    expect(progress.length).toBeGreaterThanOrEqual(2);
    const times = progress.slice(0, -1).map((e) => Date.parse(String(e.ts)));
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(990);
    expect(progress.at(-1)).toMatchObject({ total: 24, done: 24, ok: 24, running: 0 });
    // No item events without --events ndjson given.
    expect(r.events.some((e) => "itemId" in e)).toBe(false);
  });

  it("--events pretty off a terminal: plain lines (the start, the summary), no escape codes", async () => {
    fixture.server = await startChatServer((request) => itemReply(request));
    await writeFile(join(fixture.dir, "pp.jsonl"), objectLines(3));
    const r = await yiem(["pp.jsonl", "-o", join(fixture.dir, "pp-out.jsonl"), "--events", "pretty"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^batch: 3 items, 4 at a time → .*pp-out\.jsonl\n/);
    expect(r.stderr).toMatch(/batch done in .*: 3 ok, 0 error, 0 limit, 0 aborted, 0 skipped; 39 tokens; exit 0\n$/);
    expect(r.stderr).not.toContain("\x1b");
  });
});
