/**
 * How a `yiem run` ends around the files it writes, in-process (moved from test/e2e/lifecycle,
 * which keeps what only a real process shows: signals to a pid, a drained event loop, the
 * watchdog, stdout on /dev/full):
 * - a failed write after the run (--record, --session) is named in the one agentEnd; the answer
 *   is printed before the side files are written;
 * - a --session that is not a regular file is refused at once;
 * - --session and --record files are 0600 when new and keep an existing mode;
 * - `--timeout` also bounds the wait for a prompt on a stdin that never closes.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../../support/chat-server.js";
import { repoRoot } from "../../support/cli.js";
import { runCliInProcess as runCli } from "../../support/cli-in-process.js";
import { expectRunEnded, writeSpec, yiem } from "../../fixtures/battery/harness.js";

const REPLAY = join(repoRoot, "test", "fixtures", "review.replay.jsonl");

let dir: string;
let server: ChatServer | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "yiem-run-end-files-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const call = (id: string, name: string, args: object = {}) => ({ id, name, arguments: JSON.stringify(args) });

describe("the run timeout before the loop starts", () => {
  it("--timeout while stdin is read: agentEnd timeout, exit 3", async () => {
    const spec = writeSpec(dir, "stdin-timeout");
    const r = await yiem(["run", "-c", spec, "--timeout", "700"], { stdin: "open" });
    expectRunEnded(r, { code: 3, stopReason: "timeout", started: false });
  });
});

describe("failed writes after the run are named in the one agentEnd", () => {
  it("--session cannot be written: the answer is printed, then exit 1 with one agentEnd naming the file", async () => {
    // The temp file next to it gets a name longer than NAME_MAX (also fails as root).
    const session = join(dir, `${"s".repeat(240)}.json`);
    const r = await runCli(["run", "-m", `replay:${REPLAY}`, "--events", "ndjson", "--session", session, "review this"]);
    expect(r.stdout).toMatch(/\*\*Verdict\*\*: request changes\n$/);
    const end = expectRunEnded(r, { code: 1, stopReason: "error" });
    expect(end.error).toMatch(/could not write the session file .*ENAMETOOLONG/);
  });

  it("--record cannot be written: the answer is printed, then exit 1 with one agentEnd naming the file", async () => {
    const record = join(dir, `${"r".repeat(240)}.jsonl`);
    const r = await runCli(["run", "-m", `replay:${REPLAY}`, "--events", "ndjson", "--record", record, "review this"]);
    expect(r.stdout).toMatch(/request changes\n$/);
    const end = expectRunEnded(r, { code: 1, stopReason: "error" });
    expect(end.error).toMatch(/could not write the recording .*ENAMETOOLONG/);
  });

  it("a run that failed anyway keeps its stop reason and exit code; the write failure is added to its error", async () => {
    const spec = writeSpec(dir, "limit-and-bad-session", { extra: ["limits: { maxTurns: 1 }"] });
    server = await startChatServer([reply.json({ toolCalls: [call("e", "echo", { text: "x" })] })]);
    const session = join(dir, `${"t".repeat(240)}.json`);
    const r = await yiem(["run", "-c", spec, "--session", session, "hi"], { server });
    const end = expectRunEnded(r, { code: 3, stopReason: "maxTurns" });
    expect(end.error).toMatch(/maxTurns \(1\).*; could not write the session file/);
  });
});

describe("a --session that is not a regular file", () => {
  it("a FIFO is refused at once (exit 2, the file named), never waited on", async () => {
    const fifo = join(dir, "session.fifo");
    execFileSync("mkfifo", [fifo]);
    const started = Date.now();
    const r = await runCli(["run", "-m", `replay:${REPLAY}`, "--events", "ndjson", "--session", fifo, "review this"], { timeoutMs: 10_000 });
    const end = expectRunEnded(r, { code: 2, stopReason: "error", started: false });
    expect(end.error).toBe(`session file ${fifo} is not a regular file (a FIFO)`);
    expect(r.stdout).toBe("");
    expect(Date.now() - started).toBeLessThan(8_000);
  });

  it("a folder is refused with the same message", async () => {
    const r = await runCli(["run", "-m", `replay:${REPLAY}`, "--events", "ndjson", "--session", dir, "review this"]);
    const end = expectRunEnded(r, { code: 2, stopReason: "error", started: false });
    expect(end.error).toBe(`session file ${dir} is not a regular file (a folder)`);
  });
});

describe("--session and --record files are private", () => {
  it("new files are written 0600", async () => {
    const session = join(dir, "new-session.json");
    const record = join(dir, "new-record.jsonl");
    const r = await runCli(["run", "-m", `replay:${REPLAY}`, "--events", "none", "--session", session, "--record", record, "review this"]);
    expect(r.code).toBe(0);
    expect(statSync(session).mode & 0o777).toBe(0o600);
    expect(statSync(record).mode & 0o777).toBe(0o600);
  });

  it("existing files keep their mode exactly, also bits the umask (022) would clear", async () => {
    const session = join(dir, "kept-session.json");
    const record = join(dir, "kept-record.jsonl");
    writeFileSync(session, JSON.stringify({ version: 1, messages: [] }));
    writeFileSync(record, "");
    chmodSync(session, 0o664);
    chmodSync(record, 0o640);
    const r = await runCli(["run", "-m", `replay:${REPLAY}`, "--events", "none", "--session", session, "--record", record, "review this"]);
    expect(r.code).toBe(0);
    expect(statSync(session).mode & 0o777).toBe(0o664);
    expect(statSync(record).mode & 0o777).toBe(0o640);
    expect(JSON.parse(readFileSync(session, "utf8")).messages).toHaveLength(2);
  });
});
