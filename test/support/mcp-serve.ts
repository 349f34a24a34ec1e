/**
 * Helpers for `yiem mcp serve` tests: a temp project serving the repo's tools and the fixtures of
 * test/fixtures/mcp-serve/tools (with the block.sh beforeToolCall hook), the real clients that
 * drive it (the official SDK v2 and v1 clients, the MCP Inspector CLI from node_modules), and the
 * server's NDJSON stderr split into runs.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { assertEventStream, baseEnv, parseNdjson, repoRoot, yiemBin, type CliResult } from "./cli.js";

export const serveTools = join(repoRoot, "test", "fixtures", "mcp-serve", "tools");
export const blockHook = join(repoRoot, "test", "fixtures", "hooks", "block.sh");
/**
 * The Inspector's CLI: what `mcp-inspector --cli …` runs (its launcher spawns this file). The file
 * of the inspector-cli package is used because that package carries the commander it needs (the
 * top-level launcher would resolve the commander 4 that sucrase hoists).
 */
export const inspectorBin = join(repoRoot, "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "index.js");

/** A temp project: agent.config.yaml (JSON is YAML) serving getTime, getWeather and the fixtures. */
export async function serveProject(spec: Record<string, unknown> = {}, files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "yiem-serve-"));
  const full = {
    name: "serve-test",
    systemPrompt: "You are a test agent.",
    model: { name: "test-model", baseURL: "${TEST_BASE_URL:-http://127.0.0.1:9/v1}", apiKeyEnv: "TEST_API_KEY", maxRetries: 0, timeoutMs: "10s", stream: false },
    toolDirs: [join(repoRoot, "tools"), serveTools],
    builtinTools: ["listTools"],
    hooks: { beforeToolCall: { command: [blockHook] } },
    ...spec,
  };
  await writeFile(join(dir, "agent.config.yaml"), `${JSON.stringify(full, null, 2)}\n`);
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

/** The environment of a served process: clean, plus the test model's variables. */
export function serveEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  return baseEnv({ TEST_API_KEY: "sk-serve-test-secret", ...extra });
}

export interface Served {
  client: Client;
  transport: StdioClientTransport;
  /** The server's stderr so far. */
  stderr(): string;
  pid(): number;
  /** Closes the client (stdin EOF); resolves with the server's exit code once it is gone. */
  close(): Promise<number | null>;
  /** The process's exit: code (or 128+n for a signal kill). */
  exited: Promise<number | null>;
}

/** `yiem mcp serve …args` in `dir`, driven by the official v2 SDK client over stdio. */
export async function serveV2(dir: string, args: string[] = [], env: Record<string, string | undefined> = {}): Promise<Served> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [yiemBin, "mcp", "serve", ...args], cwd: dir, env: serveEnv(env), stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const client = new Client({ name: "yiem-test-v2", version: "1.0.0" });
  await client.connect(transport);
  const pid = transport.pid!;
  // The SDK transport keeps its child private; its exit code is what these tests check.
  const proc = (transport as unknown as { _process: ChildProcess })._process;
  const exited = new Promise<number | null>((resolve) => {
    if (proc.exitCode !== null) resolve(proc.exitCode);
    else proc.once("exit", (code, signal) => resolve(code ?? (signal ? 128 + constants.signals[signal] : null)));
  });
  return {
    client,
    transport,
    stderr: () => stderr,
    pid: () => pid,
    exited,
    async close() {
      await client.close();
      return exited;
    },
  };
}

/** A raw server process with pipes (for exit codes, signals and byte-exact stdout). */
export function spawnServe(dir: string, args: string[] = [], env: Record<string, string | undefined> = {}): { child: ChildProcess; stdout: () => string; stderr: () => string; exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>; send(message: object): void } {
  const child = spawn(process.execPath, [yiemBin, "mcp", "serve", ...args], { cwd: dir, env: serveEnv(env), stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
  return { child, stdout: () => stdout, stderr: () => stderr, exit, send: (message) => child.stdin!.write(`${JSON.stringify(message)}\n`) };
}

/** Waits until `check()` is true (polling), or throws after `ms`. */
export async function until(check: () => boolean, ms = 15_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
export const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };

/** The server's stderr as runs: the session's (first agentStart) and each agent-tool run, each checked against the schema. */
export function serveRuns(stderr: string): { session: CliResult["events"]; runs: Map<string, CliResult["events"]> } {
  const events = parseNdjson(stderr);
  const runs = new Map<string, CliResult["events"]>();
  for (const event of events) {
    const id = String(event.runId);
    if (!runs.has(id)) runs.set(id, []);
    runs.get(id)!.push(event);
  }
  for (const run of runs.values()) assertEventStream(run);
  const first = events.find((e) => e.type === "agentStart" && (e as { serve?: unknown }).serve !== undefined);
  return { session: first ? runs.get(String(first.runId))! : [], runs };
}

/** The Inspector CLI (0.15.0, from node_modules) with `args`; resolves with its output. */
export function inspector(args: string[], options: { cwd: string; env?: Record<string, string | undefined>; timeoutMs?: number; onSpawn?: (child: ChildProcess) => void }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [inspectorBin, ...args], { cwd: options.cwd, env: serveEnv(options.env), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
    options.onSpawn?.(child);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The yiem command a client starts, as argv after `node`. */
export const yiemServe = (...args: string[]) => [process.execPath, yiemBin, "mcp", "serve", ...args];
