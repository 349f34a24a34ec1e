/**
 * `yiem run` as a script calls it, in-process: `--no-stdin` and the `-` word's usage errors; `--`
 * before free text; one `--output json` result on every exit path but a signal's. The pipes and
 * signals that need a real process are in test/e2e/pipelines.test.ts.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, type CliResult, pipelineProject } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

let dir: string;
let server: ChatServer | undefined;

beforeAll(async () => {
  dir = await pipelineProject("yiem-run-pipelines-");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const env = (s: ChatServer | undefined, extra: Record<string, string> = {}) => ({
  TEST_BASE_URL: s?.url ?? "http://127.0.0.1:9/v1",
  TEST_API_KEY: "sk-test-pipelines",
  ...extra,
});

async function answering(text = "ok"): Promise<ChatServer> {
  server = await startChatServer(() => reply.json({ content: text }));
  return server;
}

/** The user message of the first request. */
const sentPrompt = (s: ChatServer) => s.requests[0].messages.at(-1).content as string;

describe("--no-stdin and the - word", () => {
  it("--no-stdin never reads stdin", async () => {
    const s = await answering();
    const r = await runCli(["run", "--no-stdin", "hello"], { cwd: dir, env: env(s), stdin: "piped text that must not be sent\n" });
    expect(r.code).toBe(0);
    expect(sentPrompt(s)).toBe("hello");
  });

  it("--no-stdin with no prompt words is the no-prompt usage error", async () => {
    const r = await runCli(["run", "--no-stdin"], { cwd: dir, env: env(undefined), stdin: "a prompt on stdin\n" });
    expect(r.code).toBe(2);
    expect(r.events.at(-1)!.error).toContain("no prompt");
  });

  it("- twice, or - with --no-stdin, is a usage error that says why", async () => {
    const twice = await runCli(["run", "-", "-"], { cwd: dir, env: env(undefined) });
    expect(twice.code).toBe(2);
    expect(twice.events.at(-1)!.error).toContain("only once");
    const off = await runCli(["run", "--no-stdin", "x", "-"], { cwd: dir, env: env(undefined) });
    expect(off.code).toBe(2);
    expect(off.events.at(-1)!.error).toContain("--no-stdin");
  });
});

describe("-- ends the options", () => {
  for (const prompt of ["--- a/file", "-5 is cold?", "- fix the bug", "--help", "-"]) {
    it(`yiem run -- ${JSON.stringify(prompt)} sends exactly that text`, async () => {
      const s = await answering();
      const r = await runCli(["run", "--", prompt], { cwd: dir, env: env(s) });
      expect(r.code).toBe(0);
      expect(sentPrompt(s)).toBe(prompt);
    });
  }

  it("words before and after -- make one prompt, in order", async () => {
    const s = await answering();
    const r = await runCli(["run", "--output", "json", "hello", "--", "world", "--events", "none"], { cwd: dir, env: env(s) });
    expect(r.code).toBe(0);
    expect(sentPrompt(s)).toBe("hello world --events none");
    // The flags before -- still apply; the ones after are text.
    expect(JSON.parse(r.stdout).text).toBe("ok");
    assertEventStream(r.events);
  });

  it("also with -c SPEC before the command: yiem -c SPEC run -- -5 is cold? sends that text", async () => {
    const s = await answering();
    const r = await runCli(["-c", "agent.config.yaml", "run", "--", "-5 is cold?"], { cwd: dir, env: env(s) });
    expect(r.code, r.stderr).toBe(0);
    expect(sentPrompt(s)).toBe("-5 is cold?");
  });

  it("with -c SPEC first, a usage error of run --output json is still the one JSON result", async () => {
    const r = await runCli(["-c", "agent.config.yaml", "run", "--output", "json", "--bogus", "hi"], { cwd: dir, env: env(undefined) });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ exitCode: 2, error: expect.stringContaining("--bogus") });
  });

  it("piped stdin is still appended after a -- prompt", async () => {
    const s = await answering();
    const r = await runCli(["run", "--", "-5 is cold?"], { cwd: dir, env: env(s), stdin: "context\n" });
    expect(r.code).toBe(0);
    expect(sentPrompt(s)).toBe("-5 is cold?\n\ncontext");
  });
});

const RESULT_KEYS = ["costUsd", "durationMs", "error", "exitCode", "finishReason", "model", "runId", "sessionId", "stopReason", "structured", "text", "toolCalls", "turns", "usage"];

/** stdout holds exactly one JSON object with every documented key; returns it. */
function oneResult(r: CliResult): Record<string, unknown> {
  const lines = r.stdout.split("\n").filter((l) => l !== "");
  expect(lines).toHaveLength(1);
  const json = JSON.parse(lines[0]) as Record<string, unknown>;
  expect(Object.keys(json).sort()).toEqual(RESULT_KEYS);
  return json;
}

describe("--output json prints exactly one object on every path", () => {
  it("a completed run: every key, error null, exitCode 0", async () => {
    const s = await answering("fine");
    const r = await runCli(["run", "--output", "json", "hi"], { cwd: dir, env: env(s) });
    expect(r.code).toBe(0);
    expect(oneResult(r)).toMatchObject({ text: "fine", stopReason: "completed", error: null, exitCode: 0 });
  });

  const cases: Array<[string, string[], RegExp]> = [
    ["an unknown flag", ["run", "--output", "json", "--bogus", "hi"], /unknown flag --bogus/],
    ["a bad flag value", ["run", "--output=json", "--tool-execution", "sideways", "hi"], /sideways/],
    ["a spec with an unknown key", ["run", "--output", "json", "-c", "bad.yaml", "hi"], /baseUrl/],
    ["a spec file that is missing", ["run", "--output", "json", "-c", "missing.yaml", "hi"], /missing\.yaml/],
    ["a missing API key", ["run", "--output", "json", "-c", "openai.yaml", "hi"], /OPENAI_API_KEY is not set/],
    ["no prompt", ["run", "--output", "json"], /no prompt/],
  ];
  for (const [what, args, error] of cases) {
    it(`${what}: exit 2, stopReason error, the error text, the same runId as agentEnd`, async () => {
      const r = await runCli(args, { cwd: dir, env: { TEST_BASE_URL: "http://127.0.0.1:9/v1" } });
      expect(r.code).toBe(2);
      const json = oneResult(r);
      expect(json).toMatchObject({ text: "", stopReason: "error", exitCode: 2, turns: 0, finishReason: null });
      expect(String(json.error)).toMatch(error);
      const end = r.events.at(-1)!;
      expect(end).toMatchObject({ type: "agentEnd", stopReason: "error" });
      expect(end.runId).toBe(json.runId);
    });
  }

  it("--events none: the object on stdout, the error as one line on stderr", async () => {
    const r = await runCli(["run", "--output", "json", "--events", "none", "--bogus"], { cwd: dir, env: env(undefined) });
    expect(r.code).toBe(2);
    expect(oneResult(r)).toMatchObject({ exitCode: 2 });
    expect(r.stderr).toMatch(/^yiem: unknown flag --bogus/);
  });

  it("a model failure: exit 1 and the server's words in error", async () => {
    server = await startChatServer(() => reply.error(400, "model test-model does not exist"));
    const r = await runCli(["run", "--output", "json", "hi"], { cwd: dir, env: env(server) });
    expect(r.code).toBe(1);
    const json = oneResult(r);
    expect(json).toMatchObject({ stopReason: "error", exitCode: 1 });
    expect(String(json.error)).toContain("does not exist");
  });
});
