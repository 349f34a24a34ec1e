/**
 * Parallel runs on one stored session (docs/sessions.md, "Parallel runs"): 8 concurrent
 * `--continue` runs started from a shell loop each save their turn exactly once; `--no-wait`
 * fails at once with the documented lock error; a wait is bounded by `--timeout`; a lock left by
 * a dead process is broken; a file changed behind the lock is never overwritten.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, baseEnv, parseNdjson, runCli, yiemBin } from "../support/cli.js";
import { runCliInProcess } from "../support/cli-in-process.js";

let dir: string;
let store: string;
let server: ChatServer;
let counter = 0;
/** A prompt that starts with "slow" is answered only once the test opens the gate. */
let openGate: () => void = () => {};
let gate: Promise<void>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-cli-sessions-lock-"));
  await writeFile(join(dir, "agent.config.yaml"), ["model:", "  name: test-model", "  baseURL: ${TEST_BASE_URL}", "  apiKeyEnv: TEST_API_KEY", "  maxRetries: 0", ""].join("\n"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  store = join(dir, `store-${++counter}`);
  gate = new Promise((resolve) => (openGate = resolve));
  server = await startChatServer(async (request) => {
    const prompt = String(request.body.messages.at(-1).content);
    if (prompt.startsWith("slow")) await gate;
    return reply.json({ content: `answer to ${prompt}` });
  });
});
afterEach(async () => {
  openGate();
  await server.close();
});

const env = () => ({ TEST_BASE_URL: server.url, TEST_API_KEY: "sk-test", YIEM_SESSION_DIR: store });
const run = (args: string[]) => runCli(["run", ...args], { cwd: dir, env: env(), timeoutMs: 60_000 });
/** A run whose other side is a lock file or an edit, not a second process: in-process. */
const runHere = (args: string[]) => runCliInProcess(["run", ...args], { cwd: dir, env: env(), timeoutMs: 60_000 });
/** The session's first run, before any other holds it: no real process needed, so in-process. */
const seed = async (args: string[]) => {
  const r = await runCliInProcess(["run", ...args], { cwd: dir, env: env(), timeoutMs: 60_000 });
  expect(r.code, r.stderr).toBe(0);
  return r;
};
const readSession = async (id: string) => JSON.parse(await readFile(join(store, `${id}.json`), "utf8"));
const lockFile = (id: string) => join(store, `${id}.lock`);

async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("parallel runs on one session", () => {
  it("8 concurrent --continue runs from a shell loop: every turn saved exactly once, every run exits 0 or with the lock error", async () => {
    const first = await seed(["--session-id", "shared", "turn 0"]);
    expect(first.code).toBe(0);
    const out = join(dir, `loop-${counter}`);
    await mkdir(out);
    const script = `for i in 1 2 3 4 5 6 7 8; do ( "$NODE" "$YIEM" run --continue --output json "turn $i" > "$OUT/out.$i" 2> "$OUT/err.$i"; echo $? > "$OUT/code.$i" ) & done; wait`;
    await new Promise<void>((resolve, reject) => {
      const child = spawn("sh", ["-c", script], { cwd: dir, env: baseEnv({ ...env(), NODE: process.execPath, YIEM: yiemBin, OUT: out }), stdio: "ignore" });
      const timer = setTimeout(() => child.kill("SIGKILL"), 100_000);
      child.on("error", reject);
      child.on("close", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    const saved: string[] = [];
    for (let i = 1; i <= 8; i++) {
      const code = Number((await readFile(join(out, `code.${i}`), "utf8")).trim());
      const result = JSON.parse(await readFile(join(out, `out.${i}`), "utf8"));
      const events = parseNdjson(await readFile(join(out, `err.${i}`), "utf8"));
      assertEventStream(events, { requireStart: code === 0 });
      expect(result.sessionId).toBe("shared");
      if (code === 0) saved.push(`turn ${i}`);
      else {
        // The documented lock error: exit 1, naming the session and its holder.
        expect(code).toBe(1);
        expect(result.error).toMatch(/session shared is in use by another yiem run/);
      }
    }
    const session = await readSession("shared");
    const prompts = session.runs.map((r: { messages: Array<{ content: string }> }) => r.messages[0].content);
    // Every saved turn exactly once, in some order, after the first; no turn lost or doubled.
    expect(prompts[0]).toBe("turn 0");
    expect([...prompts.slice(1)].sort()).toEqual(saved.sort());
    expect(saved).toHaveLength(8);
    expect(session.revision).toBe(9);
    expect(new Set(session.runs.map((r: { runId: string }) => r.runId)).size).toBe(9);
    // Each run saw every earlier turn: its request held all the turns saved before it.
    for (const [n, runRecord] of session.runs.entries()) {
      expect(runRecord.messages.map((m: { content: string }) => m.content)).toEqual([prompts[n], `answer to ${prompts[n]}`]);
    }
    const sent = server.requests.slice(1).map((body) => body.messages.length).sort((a, b) => a - b);
    expect(sent).toEqual([3, 5, 7, 9, 11, 13, 15, 17]);
    expect(existsSync(lockFile("shared"))).toBe(false);
  }, 120_000);

  it("--no-wait fails at once with the lock error while another run holds the session; the holder saves", async () => {
    await seed(["--session-id", "busy", "start"]);
    const holder = run(["--resume", "busy", "--output", "json", "slow one"]);
    await until(() => existsSync(lockFile("busy")));
    const second = await run(["--resume", "busy", "--no-wait", "--output", "json", "second"]);
    openGate();
    expect(second.code).toBe(1);
    assertEventStream(second.events, { requireStart: false });
    const result = JSON.parse(second.stdout);
    expect(result).toMatchObject({ sessionId: "busy", exitCode: 1, stopReason: "error" });
    expect(result.error).toMatch(new RegExp(`^session busy is in use by another yiem run \\(pid \\d+ on ${hostname()}, since \\d{4}-.*\\); not waited for \\(--no-wait\\)$`));
    expect(second.events.at(-1)).toMatchObject({ type: "agentEnd", sessionId: "busy", error: result.error });
    const first = await holder;
    expect(first.code).toBe(0);
    expect((await readSession("busy")).runs.map((r: { messages: Array<{ content: string }> }) => r.messages[0].content)).toEqual(["start", "slow one"]);
  }, 60_000);

  it("a wait for the lock is bounded by --timeout: exit 3 saying what it waited for", async () => {
    await seed(["--session-id", "held", "start"]);
    const holder = run(["--resume", "held", "slow one"]);
    await until(() => existsSync(lockFile("held")));
    const second = await run(["--resume", "held", "--timeout", "2s", "--output", "json", "second"]);
    openGate();
    expect(second.code).toBe(3);
    const result = JSON.parse(second.stdout);
    expect(result.stopReason).toBe("timeout");
    expect(result.error).toMatch(/^run timed out after 2000 ms while waiting for session held \(in use by pid \d+ on /);
    expect((await holder).code).toBe(0);
    expect((await readSession("held")).runs).toHaveLength(2);
  }, 60_000);

  it("SIGTERM during the wait ends the run as aborted (143), saying what it waited for; the holder saves", async () => {
    await seed(["--session-id", "waiting", "start"]);
    const holder = run(["--resume", "waiting", "slow one"]);
    await until(() => existsSync(lockFile("waiting")));
    // The pretty view says when the run starts waiting: stop it then.
    let waiting = false;
    const second = runCli(["run", "--resume", "waiting", "--events", "pretty", "--output", "json", "second"], {
      cwd: dir, env: env(), timeoutMs: 60_000,
      onSpawn: (child) => child.stderr!.on("data", (chunk: Buffer) => {
        if (!waiting && String(chunk).includes("waiting for session waiting (in use by pid")) {
          waiting = true;
          child.kill("SIGTERM");
        }
      }),
    });
    const r = await second;
    openGate();
    expect(waiting).toBe(true);
    expect(r.code).toBe(143);
    expect(JSON.parse(r.stdout)).toMatchObject({ stopReason: "aborted", sessionId: "waiting", error: expect.stringMatching(/while waiting for session waiting \(in use by pid \d+/) });
    expect((await holder).code).toBe(0);
    expect((await readSession("waiting")).runs.map((x: { messages: Array<{ content: string }> }) => x.messages[0].content)).toEqual(["start", "slow one"]);
  }, 60_000);

  it("a lock left by a dead process on this host is broken", async () => {
    await seed(["--session-id", "stale", "start"]);
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    await writeFile(lockFile("stale"), JSON.stringify({ pid: Number(dead.stdout), hostname: hostname(), token: "left-behind", since: "2026-01-01T00:00:00.000Z" }));
    const r = await runHere(["--resume", "stale", "--no-wait", "--output", "json", "again"]);
    expect(r.code).toBe(0);
    expect((await readSession("stale")).runs).toHaveLength(2);
    expect(existsSync(lockFile("stale"))).toBe(false);
  });

  it("a lock of a live process is not broken, also not by a --no-wait run", async () => {
    await seed(["--session-id", "live", "start"]);
    await writeFile(lockFile("live"), JSON.stringify({ pid: process.pid, hostname: hostname(), token: "held-by-the-test", since: "2026-01-01T00:00:00.000Z" }));
    const r = await run(["--resume", "live", "--no-wait", "x"]);
    expect(r.code).toBe(1);
    expect(String(r.events.at(-1)!.error)).toContain(`in use by another yiem run (pid ${process.pid} on ${hostname()}`);
    expect(JSON.parse(await readFile(lockFile("live"), "utf8")).token).toBe("held-by-the-test");
    const rmBusy = await runCli(["sessions", "rm", "live"], { env: { YIEM_SESSION_DIR: store } });
    expect(rmBusy.code).toBe(1);
    expect(rmBusy.stderr).toContain("not removed");
    expect(existsSync(join(store, "live.json"))).toBe(true);
  });

  it("a file changed behind the lock is not overwritten: the save fails (exit 1) and says so", async () => {
    await seed(["--session-id", "edited", "start"]);
    const holder = runHere(["--resume", "edited", "--output", "json", "slow one"]);
    // The run has read the session once its request reaches the server.
    await until(() => server.requests.length === 2);
    const file = await readSession("edited");
    file.revision = 5;
    file.updatedAt = new Date().toISOString();
    const text = JSON.stringify(file);
    await writeFile(join(store, "edited.json"), text);
    openGate();
    const r = await holder;
    expect(r.code).toBe(1);
    const result = JSON.parse(r.stdout);
    expect(result.text).toBe("answer to slow one");
    expect(result.error).toBe("could not save session edited, this run was not added to it: session edited changed while this run used it (revision 1 is now 5)");
    expect(await readFile(join(store, "edited.json"), "utf8")).toBe(text);
    expect(existsSync(lockFile("edited"))).toBe(false);
  }, 60_000);
});
