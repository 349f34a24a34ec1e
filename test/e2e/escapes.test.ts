/**
 * Through the CLI: runs whose code hangs or escapes the run still end
 * with exactly one agentEnd and the documented exit code.
 * - 3a: a writeTool-only spec (no tool folder) gets the watchdog: model-written `for(;;){}` ends at --timeout;
 * - 3b: a tool's abort listener that never returns is ended by the watchdog (the deadline no longer disarms it);
 * - 3d: a tool's 'exit' listener that never returns, or a stderr reader that stopped, cannot hold the exit;
 * - 4: a throw in a timer, a floating rejection (process.exit in a tool and an Error whose message
 *   getter throws run in-process: test/cli/reliability/tool-faults.test.ts);
 * - 5: console output and direct writes of tools and hooks never reach stdout or break the events.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatReply, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, baseEnv, parseNdjson, yiemBin, type CliOptions, type CliResult } from "../support/cli.js";
import { batteryEnv, eventsOf, expectNoSecrets, expectRunEnded, SECRET_KEY, writeSpec, yiemSpawned as yiem } from "../fixtures/battery/harness.js";

let dir: string;
let server: ChatServer | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "yiem-hardening-escapes-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const call = (id: string, name: string, args: object = {}) => ({ id, name, arguments: JSON.stringify(args) });

/** A folder `name` holding tool files (file name → source). */
function toolFolder(name: string, files: Record<string, string>): string {
  const folder = join(dir, name);
  mkdirSync(folder, { recursive: true });
  for (const [file, source] of Object.entries(files)) writeFileSync(join(folder, file), source);
  return folder;
}

const tool = (name: string, execute: string, top = "") =>
  `${top}\nexport default { name: ${JSON.stringify(name)}, label: "t", description: "d", inputSchema: { type: "object" }, ${execute} };\n`;

/**
 * The test's project `name`: a tool folder of `files` (file name → source), a server scripted with
 * `replies` (the file's `server`), and a spec over both (`extra` lines added); returns the spec.
 */
async function toolProject(name: string, files: Record<string, string>, replies: ChatReply[], extra: string[] = []): Promise<string> {
  const tools = toolFolder(name, files);
  server = await startChatServer(replies);
  return writeSpec(dir, name, { toolDirs: [tools], extra });
}

/** `yiem run -c SPEC …args hi`, spawned, over `toolProject(name, files, replies)`. */
async function runWithTools(name: string, files: Record<string, string>, replies: ChatReply[], args: string[] = [], options: CliOptions = {}): Promise<CliResult> {
  const spec = await toolProject(name, files, replies);
  return yiem(["run", "-c", spec, ...args, "hi"], { server, ...options });
}

/** A tool whose 'exit' listener never returns, and the model that calls it once, then answers "done". */
const HOLD_AT_EXIT = { "hold.ts": tool("hold", "execute: async () => { process.on('exit', () => { for (;;) {} }); return 'held'; }") };
const HOLD_THEN_DONE = [reply.json({ toolCalls: [call("h", "hold")] }), reply.json({ content: "done" })];

/** A tool that sends 400 updates of 4000 characters (enough to fill a pipe nobody reads). */
const CHATTY = { "chatty.ts": tool("chatty", "execute: async (_id: string, _a: unknown, _s: AbortSignal, update: (p: string) => void) => { for (let i = 0; i < 400; i++) update('x'.repeat(4000)); return 'ok'; }") };

describe("hangs the watchdog covers", () => {
  it("a spec with only builtinTools: [writeTool] and no tool folder: model-written for(;;){} ends at --timeout, exit 3", async () => {
    server = await startChatServer([
      reply.json({ toolCalls: [call("w", "writeTool", { name: "spin", label: "Spin", description: "spins", inputSchema: { type: "object" }, executeCode: "for (;;) {}" })] }),
      reply.json({ toolCalls: [call("s", "spin")] }),
      reply.json({ content: "never" }),
    ]);
    const specDir = join(dir, "writetool-only");
    mkdirSync(specDir);
    const spec = writeSpec(specDir, "spec", { toolDirs: [], extra: ["builtinTools: [writeTool]"] });
    const started = Date.now();
    // 4 s: two model turns and the written tool's first call must all come before the deadline.
    const r = await yiem(["run", "-c", spec, "--timeout", "4s", "hi"], { server, timeoutMs: 20_000 });
    const end = expectRunEnded(r, { code: 3, stopReason: "timeout" });
    expect(end.error).toMatch(/run timed out after 4000 ms: synchronous code of a tool or hook did not yield/);
    expect(Date.now() - started).toBeLessThan(16_000);
  });

  it("a tool's abort listener that never returns: the watchdog still ends the run at the deadline, exit 3", async () => {
    // 3 s: the tool must have started before the deadline, also on a loaded machine.
    const r = await runWithTools(
      "abort-listener",
      { "stuck.ts": tool("stuck", "execute: (_id: string, _a: unknown, signal: AbortSignal) => new Promise(() => { signal.addEventListener('abort', () => { for (;;) {} }); })") },
      [reply.json({ toolCalls: [call("a", "stuck")] }), reply.json({ content: "never" })],
      ["--timeout", "3s"],
      { timeoutMs: 20_000 },
    );
    const end = expectRunEnded(r, { code: 3, stopReason: "timeout" });
    expect(end.error).toMatch(/run timed out after 3000 ms/);
    expect(eventsOf(r, "toolExecutionEnd").map((e) => e.toolCallId)).toEqual(["a"]);
  });

  it("a tool's timer that starts spinning after the deadline stopped the run cannot hold it: exit 3", async () => {
    const started = Date.now();
    const r = await runWithTools(
      "late-spin",
      { "late.ts": tool("late", "execute: (_id: string, _a: unknown, signal: AbortSignal) => new Promise(() => { signal.addEventListener('abort', () => { setTimeout(() => { for (;;) {} }, 30); }); })") },
      [reply.json({ toolCalls: [call("l", "late")] }), reply.json({ content: "never" })],
      ["--timeout", "1s"],
      { env: { YIEM_EXIT_GRACE_MS: "500" }, timeoutMs: 15_000 },
    );
    const end = expectRunEnded(r, { code: 3, stopReason: "timeout" });
    expect(end.error).toMatch(/^run timed out after 1000 ms/);
    expect(Date.now() - started).toBeLessThan(12_000);
  });

  it("a tool's exit listener that never returns: the run's answer, one agentEnd, and exit 0 within the grace", async () => {
    const started = Date.now();
    const r = await runWithTools("exit-listener", HOLD_AT_EXIT, HOLD_THEN_DONE, [], { env: { YIEM_EXIT_GRACE_MS: "500" }, timeoutMs: 15_000 });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    expect(r.stdout).toBe("done\n");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a tool's timer that would spin 2 s after its call, in a run without a timeout: the process exits first, exit 0", async () => {
    const started = Date.now();
    const r = await runWithTools(
      "spin-after-run",
      { "later.ts": tool("later", "execute: async () => { setTimeout(() => { for (;;) {} }, 2000); return 'set'; }") },
      [reply.json({ toolCalls: [call("l", "later")] }), reply.json({ content: "done" })],
      [],
      { env: { YIEM_EXIT_GRACE_MS: "500" }, timeoutMs: 15_000 },
    );
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    expect(r.stdout).toBe("done\n");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a tool's exit listener that never returns in a run with a timeout (the watchdog's thread then bounds the exit): exit 0 within the grace", async () => {
    const started = Date.now();
    const r = await runWithTools("exit-listener-timeout", HOLD_AT_EXIT, HOLD_THEN_DONE, ["--timeout", "60s"], { env: { YIEM_EXIT_GRACE_MS: "500" }, timeoutMs: 15_000 });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    expect(r.stdout).toBe("done\n");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a tool that never yields and whose exit listener never returns either: the watchdog ends the run at the deadline, and the exit is bounded too, exit 3", async () => {
    const started = Date.now();
    const files = { "stuck.ts": tool("stuck", "execute: async () => { process.on('exit', () => { for (;;) {} }); for (;;) {} }") };
    const r = await runWithTools("stuck-twice", files, [reply.json({ toolCalls: [call("s", "stuck")] })], ["--timeout", "1s"], { env: { YIEM_EXIT_GRACE_MS: "500" }, timeoutMs: 15_000 });
    expectRunEnded(r, { code: 3, stopReason: "timeout" });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  // No 'exit' listener is added: the tool replaces what process.exit calls on the way out.
  for (const [what, patch] of [
    ["process.emit", "const emit = process.emit; process.emit = function (name, ...rest) { if (name === 'exit') for (;;) {} return emit.call(this, name, ...rest); };"],
    ["process.reallyExit", "(process as any).reallyExit = () => { for (;;) {} };"],
    ["EventEmitter.prototype.emit", "const { EventEmitter } = await import('node:events'); const emit = EventEmitter.prototype.emit; EventEmitter.prototype.emit = function (this: any, name: any, ...rest: any[]) { if (this === process && name === 'exit') for (;;) {} return emit.call(this, name, ...rest); };"],
  ] as const) {
    for (const args of [[], ["--timeout", "60s"]]) {
      it(`a tool that replaces ${what} to hang at exit${args.length ? ", in a run with a timeout" : ""}: the run's answer and exit 0 within the grace`, async () => {
        const started = Date.now();
        const files = { "patch.ts": tool("patch", `execute: async () => { ${patch} return 'patched'; }`) };
        const r = await runWithTools(`patch-${what.replace(/\W/g, "-")}-${args.length}`, files, [reply.json({ toolCalls: [call("p", "patch")] }), reply.json({ content: "done" })], [...args], {
          env: { YIEM_EXIT_GRACE_MS: "500" },
          timeoutMs: 15_000,
        });
        expectRunEnded(r, { code: 0, stopReason: "completed" });
        expect(r.stdout).toBe("done\n");
        expect(Date.now() - started).toBeLessThan(10_000);
      });
    }
  }

  // Code that changes the exit code, or hides or moves what the bound looks at; each with the
  // run's flags that take the path it targets (no --timeout: the thread-less exit).
  const SPIN = "process.on('exit', () => { for (;;) {} });";
  for (const [what, patch, args] of [
    ["sets process.exitCode in an exit listener", "process.on('exit', () => { process.exitCode = 9; });", []],
    ["wraps process.reallyExit to exit with another code", "const re = (process as any).reallyExit; (process as any).reallyExit = (c: number) => re.call(process, 9);", []],
    ["wraps process.reallyExit to exit with another code, in a run with a timeout", "const re = (process as any).reallyExit; (process as any).reallyExit = (c: number) => re.call(process, 9);", ["--timeout", "60s"]],
    ["adds a spinning exit listener that names one of yiem's as its .listener", `const f: any = () => { for (;;) {} }; f.listener = process.listeners('exit')[0]; process.on('exit', f);`, []],
    ["replaces process.listeners to hide its spinning exit listener", `${SPIN} const all = process.listeners.bind(process); (process as any).listeners = (e: any) => e === 'exit' ? [] : all(e);`, []],
    ["replaces WeakSet's has to vouch for its spinning exit listener", `${SPIN} WeakSet.prototype.has = () => true;`, []],
    ["puts a proxy whose trap spins on the process's prototype chain", "const p = Object.getPrototypeOf(process); Object.setPrototypeOf(process, new Proxy(p, { getOwnPropertyDescriptor(t: any, k: any) { if (k === 'reallyExit') for (;;) {} return Reflect.getOwnPropertyDescriptor(t, k); } }));", []],
    ["moves Date.now a day ahead, with a spinning exit listener", `const n = Date.now; Date.now = () => n() + 864e5; ${SPIN}`, ["--timeout", "60s"]],
    ["wraps Function.prototype.call to spin for Node's reallyExit, with a spinning exit listener", `const re = (process as any).reallyExit; const call = Function.prototype.call; Function.prototype.call = function (this: any, ...a: any[]) { if (this === re) for (;;) {} return Reflect.apply(this, a[0], a.slice(1)); } as any; void call; ${SPIN}`, ["--timeout", "60s"]],
    ["replaces the watch thread's global with a no-op, with a spinning exit listener", `for (const k of Object.getOwnPropertyNames(globalThis)) if (k.startsWith('__yiemWatchdog_')) try { Object.defineProperty(globalThis, k, { value: () => {} }); } catch {} ${SPIN}`, ["--timeout", "60s"]],
  ] as const) {
    it(`a tool that ${what}: the run's answer and exit 0 within the grace`, async () => {
      const started = Date.now();
      const files = { "patch.ts": tool("patch", `execute: async () => { ${patch} return 'patched'; }`) };
      const r = await runWithTools(`trick-${what.replace(/\W+/g, "-")}`, files, [reply.json({ toolCalls: [call("p", "patch")] }), reply.json({ content: "done" })], [...args], {
        env: { YIEM_EXIT_GRACE_MS: "500" },
        timeoutMs: 15_000,
      });
      expectRunEnded(r, { code: 0, stopReason: "completed" });
      expect(r.stdout).toBe("done\n");
      expect(Date.now() - started).toBeLessThan(10_000);
    });
  }

  it("a stderr reader that stopped reading cannot keep a finished run alive: exit 0 within the grace", async () => {
    const spec = await toolProject("chatty", CHATTY, [reply.json({ toolCalls: [call("c", "chatty")] }), reply.json({ content: "done" })]);
    const child = spawn(process.execPath, [yiemBin, "run", "-c", spec, "--events", "ndjson", "hi"], {
      env: baseEnv(batteryEnv(server, { YIEM_EXIT_GRACE_MS: "500" })),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    // stderr is never read while the run goes on: its pipe fills up.
    const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on("exit", (c, s) => resolve([c, s])));
    clearTimeout(killer);
    child.stderr.destroy();
    expect(signal).toBeNull();
    expect(code).toBe(0);
    expect(stdout).toBe("done\n");
  });
  it("with the reader stalled, a SIGTERM after the answer ends the wait at once, with the run's exit code", async () => {
    const spec = await toolProject("chatty-term", CHATTY, [reply.json({ toolCalls: [call("c", "chatty")] }), reply.json({ content: "done" })]);
    const child = spawn(process.execPath, [yiemBin, "run", "-c", spec, "--events", "ndjson", "hi"], {
      env: baseEnv(batteryEnv(server, { YIEM_EXIT_GRACE_MS: "60000" })),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let answeredAt = 0;
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      if (!answeredAt && stdout.includes("done")) {
        answeredAt = Date.now();
        setTimeout(() => child.kill("SIGTERM"), 200);
      }
    });
    const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on("exit", (c, s) => resolve([c, s])));
    clearTimeout(killer);
    child.stderr.destroy();
    expect(signal).toBeNull();
    expect(code).toBe(0);
    expect(stdout).toBe("done\n");
    expect(Date.now() - answeredAt).toBeLessThan(10_000);
  });

  it("a SIGTERM while the answer waits for stdout, then a second once it is out: the second exits at once with 143", async () => {
    // The run completed (code 0) before the first signal; the exit bound then pins 0, and the
    // second signal's forced exit must still end with its own code.
    const answer = "x".repeat(300_000);
    const spec = await toolProject("chatty-two-signals", CHATTY, [reply.json({ toolCalls: [call("c", "chatty")] }), reply.json({ content: answer })]);
    const child = spawn(process.execPath, [yiemBin, "run", "-c", spec, "--events", "ndjson", "hi"], {
      env: baseEnv(batteryEnv(server, { YIEM_EXIT_GRACE_MS: "60000" })),
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.pause();
    let stdout = 0;
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on("exit", (c, s) => resolve([c, s])));
    const killer = setTimeout(() => child.kill("SIGKILL"), 25_000);
    // The run has ended once its answer starts to arrive (held in the paused stream's buffer): a
    // fixed wait sent the first signal before the end on a loaded machine, which aborts the run.
    const deadline = Date.now() + 20_000;
    while (child.stdout.readableLength === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(child.stdout.readableLength).toBeGreaterThan(0);
    child.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 500));
    await new Promise<void>((resolve) => {
      child.stdout.on("data", (d: Buffer) => {
        stdout += d.length;
        if (stdout > answer.length) resolve();
      });
      child.stdout.resume();
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const secondAt = Date.now();
    child.kill("SIGTERM");
    const [code, signal] = await exited;
    clearTimeout(killer);
    child.stderr.destroy();
    expect(signal).toBeNull();
    expect(code).toBe(143);
    expect(stdout).toBe(answer.length + 1);
    expect(Date.now() - secondAt).toBeLessThan(5_000);
  });
});

describe("tools that try to escape the run", () => {
  for (const [what, execute, error] of [
    ["a throw in a timer", "execute: async () => { setTimeout(() => { throw new Error('timer boom'); }, 10); await new Promise((r) => setTimeout(r, 2000)); return 'late'; }", /tool or hook code threw outside its call: timer boom/],
    ["a floating promise rejection", "execute: async () => { Promise.reject(new Error('floating boom')); await new Promise((r) => setTimeout(r, 2000)); return 'late'; }", /tool or hook code left a promise rejection unhandled: floating boom/],
  ] as const) {
    it(`${what}: one agentEnd error with a readable message, exit 1, no raw stack trace`, async () => {
      const r = await runWithTools(`uncaught-${what.length}`, { "crash.ts": tool("crash", execute) }, [reply.json({ toolCalls: [call("c", "crash")] }), reply.json({ content: "never" })]);
      const end = expectRunEnded(r, { code: 1, stopReason: "error" });
      expect(end.error).toMatch(error);
      expect(r.stdout).toBe("");
      expect(eventsOf(r, "toolExecutionEnd").map((e) => e.toolCallId)).toEqual(["c"]);
    });
  }
});

describe("tool and hook output never reaches stdout or breaks the events", () => {
  it("console.log/error and direct writes of a tool (also at load) and a hook become redacted warning events; --output json stays one object", async () => {
    const hook = join(dir, "noisy-hook.ts");
    writeFileSync(hook, "export default { beforeToolCall() { console.log('hook was here'); } };\n");
    const noisy = tool(
      "noisy",
      "execute: async () => { console.log('key is', process.env.LEAKY_KEY_FOR_TEST); console.error('not an event'); process.stdout.write('direct\\n'); process.stderr.write(Buffer.from('raw bytes\\n')); return 'ok'; }",
      "console.log('loading noisy');",
    );
    const spec = await toolProject("noisy", { "noisy.ts": noisy }, [reply.json({ toolCalls: [call("n", "noisy")] }), reply.json({ content: "done" })], [`hooks: { beforeToolCall: ${JSON.stringify(hook)} }`]);
    const r = await yiem(["run", "-c", spec, "--output", "json", "hi"], { server, env: { LEAKY_KEY_FOR_TEST: SECRET_KEY } });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    expect(JSON.parse(r.stdout)).toMatchObject({ text: "done", stopReason: "completed" });
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    assertEventStream(parseNdjson(r.stderr));
    expectNoSecrets(r.stdout, r.stderr);
    const warnings = eventsOf(r, "warning").map((e) => e.message);
    expect(warnings).toEqual([
      "tool or hook code wrote to stdout: loading noisy",
      "tool or hook code wrote to stdout: hook was here",
      "tool or hook code wrote to stdout: key is ***",
      "tool or hook code wrote to stderr: not an event",
      "tool or hook code wrote to stdout: direct",
      "tool or hook code wrote to stderr: raw bytes",
    ]);
  });

  it("tools list --json and tools call keep stdout for their own output; a tool's console output goes to stderr", async () => {
    const tools = toolFolder("noisy-list", { "noisy.ts": tool("noisy", "execute: async () => { console.log('from execute'); return 'result'; }", "console.log('loading noisy');") });
    const list = await yiem(["tools", "list", "--json", "--tool-dir", tools]);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).tools.map((t: { name: string }) => t.name)).toContain("noisy");
    expect(list.stderr).toContain("loading noisy");
    const called = await yiem(["tools", "call", "noisy", "--tool-dir", tools, "--events", "ndjson"]);
    expect(called.code).toBe(0);
    expect(called.stdout).toBe("result\n");
    assertEventStream(called.events);
    expect(eventsOf(called, "warning").map((e) => e.message)).toEqual([
      "tool or hook code wrote to stdout: loading noisy",
      "tool or hook code wrote to stdout: from execute",
    ]);
  });
});
