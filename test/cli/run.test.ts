/**
 * `yiem run` end to end, in-process, against a scripted Chat Completions server on 127.0.0.1; also
 * how a run ends around the files it writes (moved from test/e2e/lifecycle, which keeps what only a
 * real process shows): a failed --record or --session write is named in the one agentEnd after the
 * answer is printed, a --session that is not a regular file is refused at once, the files are 0600
 * when new and keep an existing mode, and `--timeout` bounds the wait on a stdin that never closes.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, repoRoot } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";
import { expectRunEnded, writeSpec, yiem } from "../fixtures/battery/harness.js";

const REPLAY = join(repoRoot, "test", "fixtures", "review.replay.jsonl");
const call = (id: string, name: string, args: object = {}) => ({ id, name, arguments: JSON.stringify(args) });

let dir: string;
let server: ChatServer | undefined;

const ECHO_TOOL = `import { defineTool, toolResult } from "yiem";
export default defineTool({
  name: "shout",
  label: "Shout",
  description: "Upper-cases a text",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  async execute(_id, args, signal, onPartial) {
    onPartial("shouting");
    if (args.text === "wait") await new Promise((r) => { const t = setTimeout(r, 60_000); signal.addEventListener("abort", () => { clearTimeout(t); r(undefined); }); });
    return toolResult(String(args.text).toUpperCase());
  },
});
`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-cli-run-"));
  await mkdir(join(dir, "project", "tools"), { recursive: true });
  await mkdir(join(dir, "project", "sub", "deeper"), { recursive: true });
  await writeFile(join(dir, "project", "tools", "shout.ts"), ECHO_TOOL);
  await writeFile(join(dir, "project", "package.json"), JSON.stringify({ name: "fixture", private: true }));
  await writeFile(
    join(dir, "project", "agent.config.yaml"),
    [
      "name: e2e",
      "systemPrompt: You are terse.",
      "model:",
      "  name: test-model",
      "  baseURL: ${TEST_BASE_URL}",
      "  apiKeyEnv: TEST_API_KEY",
      "  maxRetries: 1",
      "  timeoutMs: 5s",
      "toolDirs: [tools]",
      "limits: { maxTurns: 4 }",
      "",
    ].join("\n"),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const project = () => join(dir, "project");
const env = (s: ChatServer, extra: Record<string, string> = {}) => ({ TEST_BASE_URL: s.url, TEST_API_KEY: "sk-test-secret-value", ...extra });

describe("yiem run", () => {
  it("runs a tool round trip: the final text alone on stdout, valid ndjson events on stderr", async () => {
    server = await startChatServer([
      reply.stream({ toolCalls: [{ id: "c1", name: "shout", arguments: '{"text":"hello there"}' }], argumentPieceSize: 3, usage: { prompt_tokens: 10, completion_tokens: 4 } }),
      reply.stream({ content: "It says HELLO THERE.", textPieceSize: 4, usage: { prompt_tokens: 20, completion_tokens: 6 } }),
    ]);
    const r = await runCli(["run", "shout", "hello there"], { cwd: project(), env: env(server) });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("It says HELLO THERE.\n");
    assertEventStream(r.events);
    const types = r.events.map((e) => e.type);
    expect(types).toContain("toolExecutionStart");
    expect(types).toContain("toolExecutionUpdate");
    const end = r.events.find((e) => e.type === "toolExecutionEnd") as unknown as { result: { content: Array<{ text: string }> } };
    expect(end.result.content[0].text).toBe("HELLO THERE");
    expect(r.events[0]).toMatchObject({ type: "agentStart", schemaVersion: 1, model: "test-model", tools: ["listTools", "shout"] });
    expect(r.events.at(-1)).toMatchObject({ stopReason: "completed", turns: 2, toolCalls: 1, usage: { promptTokens: 30, completionTokens: 10, totalTokens: 40 } });
    expect(server.requests[0].messages[0]).toEqual({ role: "system", content: "You are terse." });
    expect(server.requests[0].messages[1]).toEqual({ role: "user", content: "shout hello there" });
    expect(server.received[0].headers.authorization).toBe("Bearer sk-test-secret-value");
    expect(r.stderr).not.toContain("sk-test-secret-value");
    server.assertClean();
  });

  it("reports a tool file that fails to load as a warning right after agentStart, and runs with the rest", async () => {
    const broken = join(dir, "broken-project");
    await mkdir(join(broken, "tools"), { recursive: true });
    await writeFile(join(broken, "package.json"), "{}");
    await writeFile(join(broken, "tools", "shout.ts"), ECHO_TOOL);
    await writeFile(join(broken, "tools", "zz-broken.ts"), "export default {{{");
    await writeFile(join(broken, "agent.config.yaml"), "model:\n  name: test-model\n  baseURL: ${TEST_BASE_URL}\n  apiKeyEnv: TEST_API_KEY\n");
    server = await startChatServer([reply.json({ toolCalls: [{ id: "s", name: "shout", arguments: '{"text":"still works"}' }] }), reply.json({ content: "ok" })]);
    const r = await runCli(["run", "go"], { cwd: broken, env: env(server) });
    expect(r.code).toBe(0);
    assertEventStream(r.events);
    expect(r.events[1]).toMatchObject({ type: "warning", path: join(broken, "tools", "zz-broken.ts") });
    expect(r.events[0].tools).toEqual(["listTools", "shout"]);
    expect(r.events.some((e) => e.type === "toolExecutionEnd" && e.isError === false)).toBe(true);
  });

  it("finds the spec from a subfolder", async () => {
    server = await startChatServer([reply.json({ content: "found it" })]);
    const r = await runCli(["run", "hi"], { cwd: join(project(), "sub", "deeper"), env: env(server) });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("found it\n");
    expect(r.events[0].configPath).toBe(join(project(), "agent.config.yaml"));
  });

  it("--output json prints one object of the contract's shape", async () => {
    server = await startChatServer([reply.json({ content: "forty-two", usage: { prompt_tokens: 3, completion_tokens: 2 } })]);
    const r = await runCli(["run", "--output", "json", "question"], { cwd: project(), env: env(server) });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out).sort()).toEqual(["costUsd", "durationMs", "error", "exitCode", "finishReason", "model", "runId", "sessionId", "stopReason", "structured", "text", "toolCalls", "turns", "usage"]);
    expect(out).toMatchObject({ text: "forty-two", stopReason: "completed", finishReason: "stop", turns: 1, toolCalls: 0, usage: { promptTokens: 3, completionTokens: 2, totalTokens: 5 }, error: null, exitCode: 0, model: "test-model", costUsd: null, structured: null });
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
  });

  it("appends piped stdin to the prompt, and reads stdin alone when there is no prompt", async () => {
    server = await startChatServer([reply.json({ content: "a" }), reply.json({ content: "b" })]);
    const withPrompt = await runCli(["run", "review this"], { cwd: project(), env: env(server), stdin: "diff --git a/x b/x\n+line\n" });
    expect(withPrompt.code).toBe(0);
    expect(server.requests[0].messages.at(-1)).toEqual({ role: "user", content: "review this\n\ndiff --git a/x b/x\n+line" });
    const alone = await runCli(["run"], { cwd: project(), env: env(server), stdin: "only stdin" });
    expect(alone.code).toBe(0);
    expect(server.requests[1].messages.at(-1)).toEqual({ role: "user", content: "only stdin" });
  });

  it("reads stdin from a file", async () => {
    server = await startChatServer([reply.json({ content: "ok" })]);
    const file = join(dir, "prompt.txt");
    await writeFile(file, "from a file");
    const { openSync, closeSync } = await import("node:fs");
    const fd = openSync(file, "r");
    const r = await runCli(["run"], { cwd: project(), env: env(server), stdin: fd });
    closeSync(fd);
    expect(r.code).toBe(0);
    expect(server.requests[0].messages.at(-1)).toEqual({ role: "user", content: "from a file" });
  });

  it("does not hang on a stdin pipe that never closes when a prompt is given", async () => {
    server = await startChatServer([reply.json({ content: "did not wait" })]);
    // A short grace: the wait itself (5 s by default) is timed in test/e2e/pipelines.test.ts.
    const r = await runCli(["run", "hello"], { cwd: project(), env: { ...env(server), YIEM_STDIN_GRACE: "300ms" }, stdin: "open", timeoutMs: 15_000 });
    expect(r.signal).toBeNull();
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("did not wait\n");
    expect(server.requests[0].messages.at(-1)).toEqual({ role: "user", content: "hello" });
  });

  it("--input-format ndjson takes messages from stdin", async () => {
    server = await startChatServer([reply.json({ content: "ok" })]);
    const stdin = '{"role":"user","content":"first"}\n{"role":"assistant","content":"reply"}\n{"role":"user","content":"second"}\n';
    const r = await runCli(["run", "--input-format", "ndjson"], { cwd: project(), env: env(server), stdin });
    expect(r.code).toBe(0);
    expect(server.requests[0].messages.slice(1)).toEqual([
      { role: "user", content: "first" },
      { role: "assistant", content: "reply" },
      { role: "user", content: "second" },
    ]);
  });

  it("--dry-run prints the resolved spec and the first request without calling the model", async () => {
    server = await startChatServer([]);
    const r = await runCli(["run", "--dry-run", "--max-turns", "9", "plan it"], { cwd: project(), env: env(server) });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.request.model).toBe("test-model");
    expect(out.request.messages.at(-1)).toEqual({ role: "user", content: "plan it" });
    expect(out.request.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["listTools", "shout"]);
    expect(out.spec.limits.maxTurns).toBe(9);
    expect(server.received).toHaveLength(0);
    expect(r.stdout + r.stderr).not.toContain("sk-test-secret-value");
  });

  it("flags override the spec: --model, --system, --max-turns, --deny-tools", async () => {
    server = await startChatServer([reply.json({ content: "ok" })]);
    const r = await runCli(["run", "-m", "other-model", "--system", "Be loud.", "--deny-tools", "sh*", "x"], { cwd: project(), env: env(server) });
    expect(r.code).toBe(0);
    expect(server.requests[0].model).toBe("other-model");
    expect(server.requests[0].messages[0]).toEqual({ role: "system", content: "Be loud." });
    expect(server.requests[0].tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["listTools"]);
  });

  it("--record writes a replay file that replay: answers from", async () => {
    server = await startChatServer([
      reply.json({ toolCalls: [{ id: "r1", name: "shout", arguments: '{"text":"rec"}' }] }),
      reply.json({ content: "recorded answer" }),
    ]);
    const file = join(dir, "rec.jsonl");
    const r = await runCli(["run", "--record", file, "go"], { cwd: project(), env: env(server) });
    expect(r.code).toBe(0);
    const text = await readFile(file, "utf8");
    expect(text.trim().split("\n")).toHaveLength(2);
    expect(text).not.toContain("sk-test-secret-value");
    const replayed = await runCli(["run", "--model", `replay:${file}`, "go"], { cwd: project(), env: { TEST_BASE_URL: "http://127.0.0.1:9/v1" } });
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toBe("recorded answer\n");
  });

  it("--session keeps the conversation between runs", async () => {
    server = await startChatServer([reply.json({ content: "first answer" }), reply.json({ content: "second answer" })]);
    const file = join(dir, "session.json");
    await runCli(["run", "--session", file, "one"], { cwd: project(), env: env(server) });
    const r = await runCli(["run", "--session", file, "two"], { cwd: project(), env: env(server) });
    expect(r.code).toBe(0);
    expect(server.requests[1].messages.map((m: { content: string }) => m.content)).toEqual(["You are terse.", "one", "first answer", "two"]);
  });
});

describe("exit codes", () => {
  it("2 with a usage message when there is no prompt", async () => {
    server = await startChatServer([]);
    const r = await runCli(["run"], { cwd: project(), env: env(server) });
    expect(r.code).toBe(2);
    assertEventStream(r.events, { requireStart: false });
    expect(String(r.events[0].error)).toContain("no prompt");
  });

  it("2 for an unknown flag", async () => {
    const r = await runCli(["run", "--bogus-flag", "x"], { cwd: project() });
    expect(r.code).toBe(2);
    assertEventStream(r.events, { requireStart: false });
    expect(String(r.events[0].error)).toContain("bogus-flag");
    const pretty = await runCli(["run", "--events", "pretty", "--bogus-flag", "x"], { cwd: project() });
    expect(pretty.code).toBe(2);
    expect(pretty.stderr).toContain("bogus-flag");
  });

  it("1 when the model server keeps failing, after retries (retry events emitted)", async () => {
    server = await startChatServer(() => reply.error(500, "down for maintenance"));
    const r = await runCli(["run", "x"], { cwd: project(), env: env(server) });
    expect(r.code).toBe(1);
    assertEventStream(r.events);
    expect(r.events.filter((e) => e.type === "retry")).toHaveLength(1);
    expect(r.events.at(-1)).toMatchObject({ stopReason: "error" });
    expect(String(r.events.at(-1)!.error)).toContain("500");
  });

  it("1 when the model server is unreachable", async () => {
    const r = await runCli(["run", "x"], { cwd: project(), env: { TEST_BASE_URL: "http://127.0.0.1:9/v1", TEST_API_KEY: "k" } });
    expect(r.code).toBe(1);
    expect(r.events.at(-1)).toMatchObject({ type: "agentEnd", stopReason: "error" });
  });

  it("3 when maxTurns stops the run", async () => {
    server = await startChatServer((_req, i) => reply.json({ toolCalls: [{ id: `c${i}`, name: "shout", arguments: `{"text":"t${i}"}` }] }));
    const r = await runCli(["run", "--max-turns", "2", "x"], { cwd: project(), env: env(server) });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.events.at(-1)).toMatchObject({ stopReason: "maxTurns", turns: 2 });
  });

  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    it(`${code} on ${signal} while a tool runs, still ending with agentEnd aborted`, async () => {
      server = await startChatServer([reply.json({ toolCalls: [{ id: "w", name: "shout", arguments: '{"text":"wait"}' }] })]);
      let child: import("node:child_process").ChildProcess | undefined;
      const pending = runCli(["run", "x"], {
        cwd: project(),
        env: env(server),
        onSpawn: (c) => {
          child = c;
          c.stderr!.on("data", (d: Buffer) => {
            if (d.toString().includes('"toolExecutionStart"')) c.kill(signal);
          });
        },
      });
      const r = await pending;
      expect(child).toBeDefined();
      expect(r.code).toBe(code);
      assertEventStream(r.events);
      expect(r.events.at(-1)).toMatchObject({ type: "agentEnd", stopReason: "aborted" });
    });
  }
});

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

describe("an @FILE flag value that is not a regular file", () => {
  it("a FIFO is refused at once (exit 2, the flag and file named), never waited on", async () => {
    const fifo = join(dir, "system.fifo");
    execFileSync("mkfifo", [fifo]);
    const started = Date.now();
    const r = await runCli(["run", "-m", `replay:${REPLAY}`, "--events", "ndjson", "--system", `@${fifo}`, "review this"], { timeoutMs: 10_000 });
    const end = expectRunEnded(r, { code: 2, stopReason: "error", started: false });
    expect(end.error).toBe(`--system: file "${fifo}" is not a regular file (a FIFO)`);
    expect(Date.now() - started).toBeLessThan(8_000);
    const call = await runCli(["tools", "call", "getTime", "--args", `@${fifo}`, "--events", "none"], { timeoutMs: 10_000 });
    expect(call.code).toBe(2);
    expect(call.stderr).toBe(`yiem: --args: file "${fifo}" is not a regular file (a FIFO)\n`);
  });

  it("a missing file or a folder is named in words, not as an errno code", async () => {
    const missing = await runCli(["run", "-m", `replay:${REPLAY}`, "--events", "none", "--append-system", "@nope.md", "review this"], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`yiem: --append-system: file "nope.md" not found (${join(dir, "nope.md")})\n`);
    const folder = await runCli(["run", "-m", `replay:${REPLAY}`, "--events", "none", "--system", "@.", "review this"], { cwd: dir });
    expect(folder.code).toBe(2);
    expect(folder.stderr).toBe(`yiem: --system: file "." is a folder (${dir})\n`);
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
