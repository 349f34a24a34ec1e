/**
 * `yiem run` in pipelines, as a script runs it (child processes): slow and silent stdin pipes,
 * `--stdin` and the `-` word waiting on them; the one `--output json` result when a signal ends
 * the run; a parent that goes away mid-run. What needs no real process (`--no-stdin`, `--`, the
 * `--output json` result on the other exit paths) is in test/cli/run-pipelines.test.ts.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, baseEnv, parseNdjson, runCli, yiemBin, type CliOptions, type CliResult, pipelineProject } from "../support/cli.js";
import { isAlive } from "../support/processes.js";

let dir: string;
let server: ChatServer | undefined;

beforeAll(async () => {
  dir = await pipelineProject("yiem-pipelines-");
});
afterAll(async () => {
  await Promise.all(concurrentServers.map((s) => s.close()));
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

/** A server answering "ok" for one of the tests that run side by side; closed after the file. */
async function ownServer(): Promise<ChatServer> {
  const s = await startChatServer(() => reply.json({ content: "ok" }));
  concurrentServers.push(s);
  return s;
}
const concurrentServers: ChatServer[] = [];

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

// These wait on real pipes and timers: they run side by side, each with its own server.
describe.concurrent("stdin that arrives late, pauses, or never comes", () => {
  it("a producer that starts after 3 s is read in full (the grace is 5 s)", async () => {
    const s = await ownServer();
    const r = await runFed(["run", "Summarize this log"], async (stdin) => {
      await sleep(3_000);
      stdin.end("ERROR at line 42\n");
    }, { env: env(s) });
    expect(r.code).toBe(0);
    expect(sentPrompt(s)).toBe("Summarize this log\n\nERROR at line 42");
    assertEventStream(r.events);
    expect(r.events.some((e) => e.type === "warning")).toBe(false);
    // agentEnd's duration counts the wait for stdin (from when yiem started, which is after the
    // spawn the 3 s count from: node's own start-up, up to ~1 s on a loaded 2-core machine, is
    // not in it). Without the wait it is ~0.1 s.
    expect(r.events.at(-1)!.durationMs as number).toBeGreaterThanOrEqual(1_500);
  });

  it("once the first byte arrived, stdin is read to its end across a 3 s pause", async () => {
    const s = await ownServer();
    const r = await runFed(["run", "Summarize"], async (stdin) => {
      stdin.write("first half\n");
      await sleep(3_000);
      stdin.end("second half\n");
    }, { env: env(s) });
    expect(r.code).toBe(0);
    expect(sentPrompt(s)).toBe("Summarize\n\nfirst half\nsecond half");
  });

  it("a pipe that stays silent past the grace: a stdinIgnored warning naming the wait and the flags", async () => {
    const s = await ownServer();
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
    const s = await ownServer();
    const started = Date.now();
    const r = await runFed(["run", "hello"], async () => {}, { env: env(s) });
    expect(r.code).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
    expect(r.events.find((e) => e.type === "warning")?.message).toContain("5 s");
  });

  it("the pretty view shows the warning too", async () => {
    const s = await ownServer();
    const r = await runFed(["run", "--events", "pretty", "hello"], async () => {}, { env: env(s, { YIEM_STDIN_GRACE: "200ms" }) });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("stdin sent nothing in 0.2 s");
  });

  it("--stdin waits past the grace for stdin to end", async () => {
    const s = await ownServer();
    const r = await runFed(["run", "--stdin", "Summarize"], async (stdin) => {
      await sleep(1_200);
      stdin.end("late data\n");
    }, { env: env(s, { YIEM_STDIN_GRACE: "200ms" }) });
    expect(r.code).toBe(0);
    expect(sentPrompt(s)).toBe("Summarize\n\nlate data");
    expect(r.events.some((e) => e.type === "warning")).toBe(false);
  });

  it("--stdin is bounded by --timeout, and agentEnd says stdin was being waited for", async () => {
    const s = await ownServer();
    const r = await runFed(["run", "--stdin", "--timeout", "800ms", "Summarize"], async () => {}, { env: env(s) });
    expect(r.code).toBe(3);
    assertEventStream(r.events, { requireStart: false });
    expect(r.events.at(-1)).toMatchObject({ type: "agentEnd", stopReason: "timeout", error: "run timed out after 800 ms while waiting for stdin to end" });
    expect(s.requests).toHaveLength(0);
  });

  it("the prompt word - puts stdin there and waits for it like --stdin", async () => {
    const s = await ownServer();
    const r = await runFed(["run", "Summarize", "-", "in three bullets"], async (stdin) => {
      await sleep(800);
      stdin.end("the log\n");
    }, { env: env(s, { YIEM_STDIN_GRACE: "200ms" }) });
    expect(r.code).toBe(0);
    expect(sentPrompt(s)).toBe("Summarize\n\nthe log\n\nin three bullets");
  });

  it("no prompt and a pipe that never closes: the pretty view says it is waiting for stdin", async () => {
    const s = await ownServer();
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

const RESULT_KEYS = ["costUsd", "durationMs", "error", "exitCode", "finishReason", "model", "runId", "sessionId", "stopReason", "structured", "text", "toolCalls", "turns", "usage"];

/** stdout holds exactly one JSON object with every documented key; returns it. */
function oneResult(r: CliResult): Record<string, unknown> {
  const lines = r.stdout.split("\n").filter((l) => l !== "");
  expect(lines).toHaveLength(1);
  const json = JSON.parse(lines[0]) as Record<string, unknown>;
  expect(Object.keys(json).sort()).toEqual(RESULT_KEYS);
  return json;
}

describe("--output json prints exactly one object when a signal ends the run", () => {
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
