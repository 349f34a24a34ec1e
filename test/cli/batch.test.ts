/**
 * `yiem batch` through the CLI (in-process) against the scripted server: every input form,
 * results as each item finishes (own runId each, one line per id), tool round trips, the
 * template, structured output, events (batchStart, tagged item events, batchEnd) against the
 * schema, input errors before anything runs, --skip-bad-lines, exit codes.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, startChatServer } from "../support/chat-server.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { assertEventStream, type CliResult } from "../support/cli.js";
import { assertBatchStream, batchProject, useBatchProject, itemReply, objectLines, promptOf, readResults } from "../support/batch.js";

const fixture = useBatchProject();

async function batch(args: string[], options: { stdin?: string } = {}): Promise<CliResult> {
  return runCliInProcess(["batch", ...args], { cwd: fixture.dir, env: { TEST_BASE_URL: fixture.server?.url ?? "http://127.0.0.1:9/v1", TEST_API_KEY: "sk-batch-secret" }, ...options, timeoutMs: 60_000 });
}

/** Batch events (runId = the batch) and item events (with itemId) apart; every line valid. */
function split(events: CliResult["events"]) {
  const batchEvents = events.filter((e) => e.type.startsWith("batch") || (e.type === "warning" && !("itemId" in e)));
  const items = new Map<string, CliResult["events"]>();
  for (const e of events) {
    if (typeof e.itemId !== "string") continue;
    items.set(e.itemId, [...(items.get(e.itemId) ?? []), e]);
  }
  return { batchEvents, items };
}

let n = 0;
const out = () => join(fixture.dir, `results-${++n}.jsonl`);

describe("yiem batch", () => {
  it("runs object lines, JSON-string lines, plain lines and OpenAI batch-request lines, each a full run with its own runId", async () => {
    fixture.server = await startChatServer((request) => itemReply(request));
    const input = [
      JSON.stringify({ id: "a", prompt: "alpha [tools:2]" }),
      JSON.stringify("beta as a JSON string"),
      "",
      "gamma as plain text",
      JSON.stringify({ custom_id: "req-1", method: "POST", url: "/v1/chat/completions", body: { model: "ignored", messages: [{ role: "system", content: "Own system." }, { role: "user", content: "delta from a batch request" }] } }),
      JSON.stringify({ id: 7, prompt: "epsilon", stdin: "context lines" }),
    ].join("\n") + "\n";
    await writeFile(join(fixture.dir, "forms.jsonl"), input);
    const file = out();
    const r = await batch(["forms.jsonl", "-o", file, "--events", "ndjson"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    const results = await readResults(file);
    expect(results.map((x) => x.id).sort()).toEqual(["2", "4", "7", "a", "req-1"]);
    const byId = new Map(results.map((x) => [x.id, x]));
    expect(byId.get("a")).toMatchObject({ status: "ok", stopReason: "completed", text: "done: alpha [tools:2]", usage: { promptTokens: 30, completionTokens: 7, totalTokens: 37 } });
    expect(byId.get("2")!.text).toBe("done: beta as a JSON string");
    expect(byId.get("4")!.text).toBe("done: gamma as plain text");
    expect(byId.get("7")!.text).toBe("done: epsilon\n\ncontext lines");
    expect(byId.get("req-1")!.text).toBe("done: delta from a batch request");
    // The line's own system message replaces the spec's; the spec's goes first elsewhere.
    const systemOf = (prompt: string) => fixture.server!.received.find((q) => promptOf(q) === prompt)!.body.messages[0];
    expect(systemOf("delta from a batch request")).toEqual({ role: "system", content: "Own system." });
    expect(systemOf("epsilon\n\ncontext lines")).toEqual({ role: "system", content: "You answer briefly." });
    expect(new Set(results.map((x) => x.runId)).size).toBe(5);
    for (const x of results) expect(Object.keys(x)).toEqual(["id", "runId", "status", "stopReason", "text", "usage", "durationMs"]);

    const { batchEvents, items } = split(r.events);
    assertBatchStream(batchEvents);
    expect(batchEvents[0]).toMatchObject({ type: "batchStart", total: 5, skipped: 0, concurrency: 4, shard: null, resumed: false });
    expect(batchEvents.at(-1)).toMatchObject({ type: "batchEnd", total: 5, ok: 5, error: 0, limit: 0, aborted: 0, skipped: 0, notRun: 0, exitCode: 0, usage: { promptTokens: 70, completionTokens: 19, totalTokens: 89 } });
    // Every item's events: one run each, tagged with its id, the run's own runId and seq.
    expect([...items.keys()].sort()).toEqual(["2", "4", "7", "a", "req-1"]);
    for (const [id, events] of items) {
      assertEventStream(events);
      expect(events[0].runId).toBe(byId.get(id)!.runId);
    }
    expect(items.get("a")!.filter((e) => e.type === "toolExecutionEnd")).toHaveLength(2);
    fixture.server.assertClean();
  });

  it("fills --prompt-template from vars; a placeholder without a value is an input error naming the line and the name, before anything runs", async () => {
    fixture.server = await startChatServer((request) => itemReply(request));
    await writeFile(join(fixture.dir, "vars.jsonl"), [
      JSON.stringify({ id: "x", vars: { service: "api", day: 3 } }),
      JSON.stringify({ id: "y", prompt: "P", vars: { service: "web", day: { n: 4 } } }),
    ].join("\n"));
    const file = out();
    const r = await batch(["vars.jsonl", "-o", file, "--prompt-template", "Summarise {{service}} on day {{ day }} ({{id}}: {{prompt}})"]);
    expect(r.code, r.stderr).toBe(0);
    const texts = Object.fromEntries((await readResults(file)).map((x) => [x.id, x.text]));
    expect(texts).toEqual({ x: "done: Summarise api on day 3 (x: )", y: 'done: Summarise web on day {"n":4} (y: P)' });

    await writeFile(join(fixture.dir, "missing-var.jsonl"), [JSON.stringify({ id: "x", vars: { service: "api" } }), JSON.stringify({ id: "z", vars: { day: 1 } })].join("\n"));
    const before = fixture.server.received.length;
    const bad = await batch(["missing-var.jsonl", "-o", out(), "--prompt-template", "{{service}} {{day}}"]);
    expect(bad.code).toBe(2);
    expect(bad.events.at(-1)).toMatchObject({ type: "batchEnd", exitCode: 2 });
    const failure = String(bad.events.at(-1)!.failure);
    expect(failure).toContain('line 1 (id "x"): --prompt-template uses {{day}}, which this item\'s vars do not have');
    expect(failure).toContain('line 2 (id "z"): --prompt-template uses {{service}}');
    expect(fixture.server.received.length).toBe(before);
  });

  it("refuses duplicate ids and malformed lines before anything runs, naming every line; --skip-bad-lines records them as errors (exit 1) and runs the rest", async () => {
    fixture.server = await startChatServer((request) => itemReply(request));
    await writeFile(join(fixture.dir, "bad.jsonl"), [
      JSON.stringify({ id: "a", prompt: "one" }),
      "{not json",
      JSON.stringify({ id: "a", prompt: "again" }),
      JSON.stringify({ id: "b", promt: "typo" }),
      JSON.stringify({ id: "c", prompt: "fine" }),
    ].join("\n") + "\n");
    const file = out();
    const r = await batch(["bad.jsonl", "-o", file, "--events", "none"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("3 bad lines, so nothing ran");
    expect(r.stderr).toContain("line 2: not valid JSON");
    expect(r.stderr).toContain('line 3: the id "a" is used by an earlier line too');
    expect(r.stderr).toContain('line 4 (id "b"): unknown key "promt"');
    expect(fixture.server.received).toHaveLength(0);
    await expect(readFile(file)).rejects.toThrow();

    const skipped = await batch(["bad.jsonl", "-o", file, "--skip-bad-lines"]);
    expect(skipped.code).toBe(1);
    const results = await readResults(file);
    expect(results.map((x) => x.id).sort()).toEqual(["a", "c", "line:2", "line:3", "line:4"]);
    expect(results.find((x) => x.id === "line:3")).toMatchObject({ runId: null, status: "error", line: 3, error: 'line 3: the id "a" is used by an earlier line too: ids must be unique' });
    expect(results.find((x) => x.id === "a")!.text).toBe("done: one");
    expect(skipped.events.at(-1)).toMatchObject({ type: "batchEnd", ok: 2, error: 3, exitCode: 1 });
  });

  it("reads the input from stdin (-), and refuses to overwrite results without --resume", async () => {
    fixture.server = await startChatServer((request) => itemReply(request));
    const file = out();
    const r = await batch(["-", "-o", file], { stdin: objectLines(3) });
    expect(r.code, r.stderr).toBe(0);
    expect((await readResults(file)).map((x) => x.id).sort()).toEqual(["item-0", "item-1", "item-2"]);
    const again = await batch(["-", "-o", file], { stdin: objectLines(3) });
    expect(again.code).toBe(2);
    expect(String(again.events.at(-1)!.failure)).toContain("already holds results: add --resume");
    // `-` right after a flag that takes no value is still stdin.
    const resumed = await batch(["--resume", "-", "-o", file], { stdin: objectLines(3) });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.events.at(-1)).toMatchObject({ type: "batchEnd", total: 3, skipped: 3, ok: 0 });
    // ... after a boolean every command takes (--no-spec-mcp), and after a short flag holding its value (-j2).
    for (const flags of [["--no-spec-mcp"], ["-j2"]]) {
      const other = out();
      const r2 = await batch([...flags, "-", "-o", other], { stdin: objectLines(2) });
      expect(r2.code, `${flags.join(" ")}: ${r2.stderr}`).toBe(0);
      expect((await readResults(other)).map((x) => x.id).sort()).toEqual(["item-0", "item-1"]);
    }
  });

  it("quotes a bad number flag as typed (-j, --concurrency, --rate), not as NaN", async () => {
    const r = await batch(["-", "-o", out(), "-j", "x", "--rate", "abc"], { stdin: '{"id": "a", "prompt": "one"}\n' });
    expect(r.code).toBe(2);
    expect(String(r.events.at(-1)!.failure)).toBe('2 problems:\n  --rate "abc": use requests per minute, a number above 0\n  --concurrency "x": use a whole number from 1 to 1024');
    const long = await batch(["-", "-o", out(), "--concurrency=many"], { stdin: '{"id": "a", "prompt": "one"}\n' });
    expect(String(long.events.at(-1)!.failure)).toBe('--concurrency "many": use a whole number from 1 to 1024');
  });

  it("names bad lines of stdin as stdin's, never the private copy it reads them from", async () => {
    const r = await batch(["-", "-o", out()], { stdin: '{"id": "a", "prompt": "one"}\n{"id": "a", "prompt": "two"}\n' });
    expect(r.code).toBe(2);
    expect(String(r.events.at(-1)!.failure)).toBe(
      'stdin: 1 bad line, so nothing ran (--skip-bad-lines records them as errors and runs the rest):\n  line 2: the id "a" is used by an earlier line too: ids must be unique',
    );
  });

  it("ends items at their limits (exit 3) and failures (exit 1); the answer of a spec with an output schema is `structured`", async () => {
    const limited = await batchProject("output: { schema: { type: object, properties: { n: { type: integer } }, required: [n], additionalProperties: false }, retries: 0 }\n");
    try {
      fixture.server = await startChatServer((request) => {
        const prompt = promptOf(request);
        if (prompt.startsWith("loop")) return reply.json({ toolCalls: [{ id: `c${Math.random()}`, name: "echo", arguments: JSON.stringify({ text: String(request.body.messages.length) }) }] });
        return reply.json({ toolCalls: [{ id: "f1", name: "finalAnswer", arguments: JSON.stringify({ n: prompt.length }) }] });
      });
      await writeFile(join(limited, "in.jsonl"), [JSON.stringify({ id: "s", prompt: "four" }), JSON.stringify({ id: "l", prompt: "loop forever" })].join("\n"));
      const file = join(limited, "out.jsonl");
      const r = await runCliInProcess(["batch", "in.jsonl", "-o", file, "--max-turns", "2"], { cwd: limited, env: { TEST_BASE_URL: fixture.server.url, TEST_API_KEY: "k" } });
      expect(r.code, r.stderr).toBe(3);
      const byId = Object.fromEntries((await readResults(file)).map((x) => [x.id, x]));
      expect(byId.s).toMatchObject({ status: "ok", structured: { n: 4 }, text: '{"n":4}' });
      expect(byId.l).toMatchObject({ status: "limit", stopReason: "maxTurns" });
    } finally {
      await rm(limited, { recursive: true, force: true });
    }
    await fixture.server.close();
    fixture.server = await startChatServer((request) => (promptOf(request) === "fails" ? reply.error(400, "bad request here") : itemReply(request)));
    await writeFile(join(fixture.dir, "fail.jsonl"), ["fails", "works"].join("\n"));
    const file = out();
    const r = await batch(["fail.jsonl", "-o", file]);
    expect(r.code).toBe(1);
    const byId = Object.fromEntries((await readResults(file)).map((x) => [x.id, x]));
    expect(byId["1"]).toMatchObject({ status: "error", stopReason: "error" });
    expect(byId["1"].error).toContain("bad request here");
    expect(byId["2"]).toMatchObject({ status: "ok" });
    expect(JSON.stringify(r.events)).not.toContain("sk-batch-secret");
  });

  it("names usage errors: no input, no -o, a bad --concurrency, a bad --shard, a missing input file", async () => {
    const r1 = await batch(["--events", "none"]);
    expect(r1.code).toBe(2);
    expect(r1.stderr).toContain("name the input file");
    expect(r1.stderr).toContain("name the results file with -o");
    const r2 = await batch(["nope.jsonl", "-o", out(), "-j", "0", "--shard", "5/4", "--events", "none"]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain("input nope.jsonl: not found");
    expect(r2.stderr).toContain('--concurrency "0": use a whole number from 1 to 1024');
    expect(r2.stderr).toContain("--shard 5/4: the index is 1-based, from 1 to 4");
  });
});
