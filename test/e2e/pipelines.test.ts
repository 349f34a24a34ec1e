/**
 * `yiem run` in pipelines, as a script runs it (child processes): slow and silent stdin, `--stdin`,
 * `--no-stdin` and the `-` word; `--` before free text; one `--output json` result on every exit
 * path; a parent that goes away mid-run.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, baseEnv, parseNdjson, runCli, yiemBin, type CliOptions, type CliResult } from "../support/cli.js";
import { isAlive } from "../support/processes.js";

let dir: string;
let server: ChatServer | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-pipelines-"));
  await writeFile(
    join(dir, "agent.config.yaml"),
    ["model:", "  name: test-model", "  baseURL: ${TEST_BASE_URL}", "  apiKeyEnv: TEST_API_KEY", "  maxRetries: 0", "builtinTools: []", ""].join("\n"),
  );
  await writeFile(join(dir, "bad.yaml"), "model: { name: m, baseUrl: http://x }\n");
  await writeFile(join(dir, "openai.yaml"), "model: gpt-4o\n");
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

/** A run whose stdin is an open pipe fed by `feed` (which may pause, write, and end it). */
function runFed(args: string[], feed: (stdin: NodeJS.WritableStream) => Promise<void>, options: CliOptions = {}): Promise<CliResult> {
  return runCli(args, {
    cwd: dir,
    timeoutMs: 25_000,
    ...options,
    stdin: "open",
    onSpawn: (child) => {
      void feed(child.stdin!).catch(() => {});
    },
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("stdin that arrives late, pauses, or never comes", () => {
  it("a producer that starts after 2 s is read in full (the grace is 5 s)", async () => {
    const s = await answering();
    const r = await runFed(["run", "Summarize this log"], async (stdin) => {
      await sleep(2_000);
      stdin.end("ERROR at line 42\n");
    }, { env: env(s) });
    expect(r.code).toBe(0);
    expect(sentPrompt(s)).toBe("Summarize this log\n\nERROR at line 42");
    assertEventStream(r.events);
    expect(r.events.some((e) => e.type === "warning")).toBe(false);
    // agentEnd's duration counts the wait for stdin (from when yiem started, which is after the
    // spawn the 2 s count from: node's own start-up is not in it). Without the wait it is ~0.1 s.
    expect(r.events.at(-1)!.durationMs as number).toBeGreaterThanOrEqual(1_200);
  });

  it("once the first byte arrived, stdin is read to its end across a 3 s pause", async () => {
    const s = await answering();
    const r = await runFed(["run", "Summarize"], async (stdin) => {
      stdin.write("first half\n");
      await sleep(3_000);
      stdin.end("second half\n");
    }, { env: env(s) });
    expect(r.code).toBe(0);
    expect(sentPrompt(s)).toBe("Summarize\n\nfirst half\nsecond half");
  });

  it("a pipe that stays silent past the grace: a stdinIgnored warning naming the wait and the flags", async () => {
    const s = await answering();
    const r = await runFed(["run", "hello"], async () => {}, { env: env(s, { YIEM_STDIN_GRACE: "300ms" }) });
    expect(r.code).toBe(0);
    expect(sentPrompt(s)).toBe("hello");
    assertEventStream(r.events);
    const warning = r.events.find((e) => e.type === "warning")!;
    expect(warning).toMatchObject({ code: "stdinIgnored" });
    expect(warning.message).toContain("0.3 s");
    expect(warning.message).toContain("--stdin");
    expect(warning.message).toContain("--no-stdin");
    // It comes right after agentStart, before the model is asked.
    expect(r.events.slice(0, 2).map((e) => e.type)).toEqual(["agentStart", "warning"]);
  });

  it("the default grace is 5 s before the warning", async () => {
    const s = await answering();
    const started = Date.now();
    const r = await runFed(["run", "hello"], async () => {}, { env: env(s) });
    expect(r.code).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
    expect(r.events.find((e) => e.type === "warning")?.message).toContain("5 s");
  });

  it("the pretty view shows the warning too", async () => {
    const s = await answering();
    const r = await runFed(["run", "--events", "pretty", "hello"], async () => {}, { env: env(s, { YIEM_STDIN_GRACE: "200ms" }) });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("stdin sent nothing in 0.2 s");
  });

  it("--stdin waits past the grace for stdin to end", async () => {
    const s = await answering();
    const r = await runFed(["run", "--stdin", "Summarize"], async (stdin) => {
      await sleep(1_200);
      stdin.end("late data\n");
    }, { env: env(s, { YIEM_STDIN_GRACE: "200ms" }) });
    expect(r.code).toBe(0);
    expect(sentPrompt(s)).toBe("Summarize\n\nlate data");
    expect(r.events.some((e) => e.type === "warning")).toBe(false);
  });

  it("--stdin is bounded by --timeout, and agentEnd says stdin was being waited for", async () => {
    const s = await answering();
    const r = await runFed(["run", "--stdin", "--timeout", "800ms", "Summarize"], async () => {}, { env: env(s) });
    expect(r.code).toBe(3);
    assertEventStream(r.events, { requireStart: false });
    expect(r.events.at(-1)).toMatchObject({ type: "agentEnd", stopReason: "timeout", error: "run timed out after 800 ms while waiting for stdin to end" });
    expect(s.requests).toHaveLength(0);
  });

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

  it("the prompt word - puts stdin there and waits for it like --stdin", async () => {
    const s = await answering();
    const r = await runFed(["run", "Summarize", "-", "in three bullets"], async (stdin) => {
      await sleep(800);
      stdin.end("the log\n");
    }, { env: env(s, { YIEM_STDIN_GRACE: "200ms" }) });
    expect(r.code).toBe(0);
    expect(sentPrompt(s)).toBe("Summarize\n\nthe log\n\nin three bullets");
  });

  it("- twice, or - with --no-stdin, is a usage error that says why", async () => {
    const twice = await runCli(["run", "-", "-"], { cwd: dir, env: env(undefined) });
    expect(twice.code).toBe(2);
    expect(twice.events.at(-1)!.error).toContain("only once");
    const off = await runCli(["run", "--no-stdin", "x", "-"], { cwd: dir, env: env(undefined) });
    expect(off.code).toBe(2);
    expect(off.events.at(-1)!.error).toContain("--no-stdin");
  });

  it("no prompt and a pipe that never closes: the pretty view says it is waiting for stdin", async () => {
    const s = await answering();
    const r = await runFed(["run", "--events", "pretty", "--timeout", "2s"], async () => {}, { env: env(s) });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("waiting for stdin to end");
    expect(r.stderr).toContain("while waiting for stdin to end");
  });

  it("no prompt and a pipe that never closes: --timeout names the wait in agentEnd.error", async () => {
    const r = await runFed(["run", "--timeout", "700ms"], async () => {}, { env: env(undefined) });
    expect(r.code).toBe(3);
    expect(r.events.at(-1)).toMatchObject({ stopReason: "timeout", error: "run timed out after 700 ms while waiting for stdin to end" });
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

  it("a run ended by a signal: exitCode 143 in the object", async () => {
    server = await startChatServer([reply.hang()]);
    const hung = server;
    const r = await runCli(["run", "--output", "json", "hi"], {
      cwd: dir,
      env: env(hung),
      onSpawn: (child) => {
        const timer = setInterval(() => {
          if (hung.received.length > 0) {
            clearInterval(timer);
            child.kill("SIGTERM");
          }
        }, 50);
      },
    });
    expect(r.code).toBe(143);
    expect(oneResult(r)).toMatchObject({ stopReason: "aborted", exitCode: 143 });
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

describe("a parent that goes away mid-run", () => {
  it("killing a wrapper (as kill $! kills npx) ends yiem as SIGHUP would: agentEnd aborted, exit 129", async () => {
    server = await startChatServer([reply.hang()]);
    const out = join(dir, "orphan.json");
    const events = join(dir, "orphan.ndjson");
    const pidFile = join(dir, "orphan.pid");
    // The wrapper starts yiem and stays its parent until it is killed, passing no signal on.
    const wrapper = spawn(process.execPath, ["-e", `
      const { spawn } = require("node:child_process");
      const fs = require("node:fs");
      const child = spawn(process.execPath, ${JSON.stringify([yiemBin, "run", "--output", "json", "hi"])}, {
        cwd: ${JSON.stringify(dir)},
        stdio: ["ignore", fs.openSync(${JSON.stringify(out)}, "w"), fs.openSync(${JSON.stringify(events)}, "w")],
      });
      fs.writeFileSync(${JSON.stringify(pidFile)}, String(child.pid));
      setInterval(() => {}, 1000);
    `], { env: baseEnv(env(server)), stdio: "ignore" });
    const hung = server;
    await waitFor(() => hung.received.length > 0 && existsSync(pidFile), 15_000);
    const yiemPid = Number(readFileSync(pidFile, "utf8"));
    wrapper.kill("SIGKILL");
    await waitFor(() => !isAlive(yiemPid), 10_000);
    const stream = parseNdjson(readFileSync(events, "utf8"));
    assertEventStream(stream);
    expect(stream.at(-1)).toMatchObject({ type: "agentEnd", stopReason: "aborted" });
    expect(String(stream.at(-1)!.error)).toContain(`parent process (pid ${wrapper.pid}) exited`);
    expect(JSON.parse(readFileSync(out, "utf8"))).toMatchObject({ stopReason: "aborted", exitCode: 129 });
  });
});

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await sleep(50);
  }
}
