/**
 * `yiem batch` and `yiem batch merge` where a script relies on them not to lose work or lie
 * (each case found by a review, each a bug before its fix): a results file that is the input
 * (a link to it too) is refused and left alone; `--resume` exits as the whole batch ended,
 * skipped items included; an item may not take a bad line's id (`line:N`); merge never
 * overwrites its `--input`, reads a line recorded as a bad line (`line:N`) as that line's
 * result, drops a `line:N` result its line's own id superseded, and prints its report as one
 * JSON line.
 */
import { readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, startChatServer } from "../support/chat-server.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import type { CliResult } from "../support/cli.js";
import { useBatchProject, itemReply, promptOf, readResults } from "../support/batch.js";

const fixture = useBatchProject();

async function yiem(args: string[]): Promise<CliResult> {
  return runCliInProcess(args, { cwd: fixture.dir, env: { TEST_BASE_URL: fixture.server?.url ?? "http://127.0.0.1:9/v1", TEST_API_KEY: "sk-batch-secret" }, timeoutMs: 60_000 });
}

const at = (name: string) => join(fixture.dir, name);

describe("yiem batch: what a script relies on", () => {
  it("refuses a results file that is the input through a link, and leaves the input as it was (also with --resume)", async () => {
    fixture.server = await startChatServer((request) => itemReply(request));
    const text = '{"id":"a","prompt":"x"}';
    await writeFile(at("linked-input.jsonl"), text);
    await symlink(at("linked-input.jsonl"), at("linked-results.jsonl"));
    for (const extra of [[], ["--resume"]]) {
      const r = await yiem(["batch", "linked-input.jsonl", "-o", "linked-results.jsonl", "--events", "none", ...extra]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("the input and the results file are the same file: name another -o");
      expect(await readFile(at("linked-input.jsonl"), "utf8")).toBe(text);
    }
    expect(fixture.server.received).toHaveLength(0);
  });

  it("--resume of a file that is not a results file names its line and changes nothing", async () => {
    await writeFile(at("resume-input.jsonl"), '{"id":"a","prompt":"x"}\n');
    await writeFile(at("not-results.jsonl"), '{"id":"z","prompt":"an input, named by mistake"}');
    const r = await yiem(["batch", "resume-input.jsonl", "-o", "not-results.jsonl", "--resume", "--events", "none"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not-results.jsonl line 1: not a result (it needs "id" and "status")');
    expect(await readFile(at("not-results.jsonl"), "utf8")).toBe('{"id":"z","prompt":"an input, named by mistake"}');
  });

  it("--resume exits 1 when an item it skipped had ended in an error, 0 once none did", async () => {
    let failing = true;
    fixture.server = await startChatServer((request) => (failing && promptOf(request) === "fails" ? reply.error(400, "bad request here") : itemReply(request)));
    await writeFile(at("resume-errors.jsonl"), '{"id":"a","prompt":"hello"}\n{"id":"b","prompt":"fails"}\n');
    const first = await yiem(["batch", "resume-errors.jsonl", "-o", "resume-errors.out.jsonl", "--events", "none"]);
    expect(first.code).toBe(1);
    const resumed = await yiem(["batch", "resume-errors.jsonl", "-o", "resume-errors.out.jsonl", "--resume", "--events", "ndjson"]);
    // Nothing ran again (both final), but b's result is still an error: the batch did not end ok.
    expect(resumed.code).toBe(1);
    expect(resumed.events.find((e) => e.type === "batchEnd")).toMatchObject({ skipped: 2, error: 0, exitCode: 1 });
    // Once b's error is removed and b runs again (ok now), the batch is ok.
    failing = false;
    const kept = (await readResults(at("resume-errors.out.jsonl"))).filter((x) => x.id !== "b");
    await writeFile(at("resume-errors.out.jsonl"), kept.map((x) => `${JSON.stringify(x)}\n`).join(""));
    const fixed = await yiem(["batch", "resume-errors.jsonl", "-o", "resume-errors.out.jsonl", "--resume", "--events", "none"]);
    expect(fixed.code).toBe(0);
  });

  it("an item may not take a bad line's id (line:N): its line is a bad line", async () => {
    fixture.server = await startChatServer((request) => itemReply(request));
    await writeFile(at("reserved-id.jsonl"), '{"id":"line:2","prompt":"a"}\n{"id":"b","promt":"x"}\n');
    const r = await yiem(["batch", "reserved-id.jsonl", "-o", "reserved-id.out.jsonl", "--events", "none"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('line 1 (id "line:2"): the id "line:2" has the form of a bad line\'s id in the results (line:N): use another');
    const skipped = await yiem(["batch", "reserved-id.jsonl", "-o", "reserved-id.skip.jsonl", "--skip-bad-lines", "--events", "none"]);
    expect(skipped.code).toBe(1);
    const ids = (await readResults(at("reserved-id.skip.jsonl"))).map((x) => x.id).sort();
    expect(ids).toEqual(["line:1", "line:2"]);
  });
});

describe("yiem batch merge: what a script relies on", () => {
  it("refuses -o naming the --input file (also through a link), leaving it as it was", async () => {
    await writeFile(at("merge-in.jsonl"), '{"id":"a","prompt":"x"}\n');
    await writeFile(at("merge-r.jsonl"), `${JSON.stringify({ id: "a", runId: "r", status: "ok", stopReason: "completed", text: "", usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, durationMs: 1 })}\n`);
    await symlink(at("merge-in.jsonl"), at("merge-in-link.jsonl"));
    for (const output of ["merge-in.jsonl", "merge-in-link.jsonl"]) {
      const r = await yiem(["batch", "merge", "merge-r.jsonl", "-o", output, "--input", "merge-in.jsonl"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`-o ${output} is the --input file: name another`);
      expect(await readFile(at("merge-in.jsonl"), "utf8")).toBe('{"id":"a","prompt":"x"}\n');
    }
  });

  it("reads a line the batch recorded as a bad line (line:N) as that line's result, drops one its own id superseded, and reports on one line", async () => {
    fixture.server = await startChatServer((request) => itemReply(request));
    // Line 2 has no value for the template's placeholder, line 3 no user message: both recorded as line:N.
    const input = ['{"id":"a","vars":{"x":"1"}}', '{"id":"b","vars":{}}', '{"custom_id":"c","body":{"messages":[{"role":"system","content":"s"}]}}'];
    await writeFile(at("prepare.jsonl"), `${input.join("\n")}\n`);
    const r = await yiem(["batch", "prepare.jsonl", "-o", "prepare.out.jsonl", "--prompt-template", "do {{x}}", "--skip-bad-lines", "--events", "none"]);
    expect(r.code).toBe(1);
    expect((await readResults(at("prepare.out.jsonl"))).map((x) => x.id).sort()).toEqual(["a", "line:2", "line:3"]);
    const m = await yiem(["batch", "merge", "prepare.out.jsonl", "-o", "prepare.all.jsonl", "--input", "prepare.jsonl"]);
    expect(m.stderr).toBe("");
    expect(m.code).toBe(0);
    // The report is one JSON line.
    expect(m.stdout.split("\n")).toHaveLength(2);
    expect(JSON.parse(m.stdout)).toMatchObject({ results: 3, missingCount: 0, unknownCount: 0, duplicateCount: 0, complete: true });

    // Line 2 fixed and the batch resumed: its own id's result supersedes the stale line:2.
    input[1] = '{"id":"b","vars":{"x":"2"}}';
    await writeFile(at("prepare.jsonl"), `${input.join("\n")}\n`);
    const resumed = await yiem(["batch", "prepare.jsonl", "-o", "prepare.out.jsonl", "--prompt-template", "do {{x}}", "--skip-bad-lines", "--resume", "--events", "none"]);
    expect(resumed.code).toBe(1);
    const again = await yiem(["batch", "merge", "prepare.out.jsonl", "-o", "prepare.all.jsonl", "--input", "prepare.jsonl"]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ results: 3, complete: true });
    expect((await readResults(at("prepare.all.jsonl"))).map((x) => x.id).sort()).toEqual(["a", "b", "line:3"]);
    // Without its line in the input, a line:N result is unknown as before.
    await writeFile(at("prepare-short.jsonl"), `${input[0]}\n`);
    const short = await yiem(["batch", "merge", "prepare.out.jsonl", "-o", "prepare.short.jsonl", "--input", "prepare-short.jsonl"]);
    expect(short.code).toBe(1);
    expect(short.stderr).toContain("unknown id (not in --input): line:3");
  });
});
