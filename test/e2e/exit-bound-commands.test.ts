/**
 * Through the real binary: the exit bound (src/cli/bounded-exit.ts) holds for every command that
 * may run tool code, not only `yiem run`. A tool whose 'exit' listener never returns (added at
 * its module's top level, or in `execute`) cannot hold `tools list`, `tools call`, `batch` or
 * `mcp serve` past the grace, and the exit code stays the command's.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { baseEnv, runCli, yiemBin, type CliResult } from "../support/cli.js";

let dir: string;
let server: ChatServer | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "yiem-exit-bound-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const SPIN_AT_EXIT = "process.on('exit', () => { for (;;) {} });";

/** A project `name`: a spec over a tool folder holding `hold.ts`, whose exit listener spins (added at load or in execute). */
function project(name: string, at: "load" | "execute", baseURL = "http://127.0.0.1:9/v1"): string {
  const root = join(dir, name);
  mkdirSync(join(root, "tools"), { recursive: true });
  const execute = at === "execute" ? `async () => { ${SPIN_AT_EXIT} process.exitCode = 9; return 'held'; }` : "async () => 'held'";
  writeFileSync(
    join(root, "tools", "hold.ts"),
    `${at === "load" ? SPIN_AT_EXIT : ""}\nexport default { name: "hold", label: "Hold", description: "holds the exit", inputSchema: { type: "object" }, execute: ${execute} };\n`,
  );
  writeFileSync(join(root, "agent.yaml"), `name: ${name}\nmodel:\n  name: m\n  baseURL: ${baseURL}\n  apiKeyEnv: TEST_API_KEY\ntoolDirs: [tools]\n`);
  return root;
}

/** `yiem ARGS` in `cwd` with a 500 ms grace; fails the test (killed) after 15 s. */
async function yiemIn(cwd: string, args: string[], stdin?: string): Promise<CliResult & { ms: number }> {
  const started = Date.now();
  const r = await runCli(args, { cwd, stdin, timeoutMs: 15_000, env: { YIEM_EXIT_GRACE_MS: "500", TEST_API_KEY: "sk-test" } });
  return { ...r, ms: Date.now() - started };
}

describe("the exit bound beyond yiem run", () => {
  it("tools list: a tool module that adds a spinning exit listener at load cannot hold the exit", async () => {
    const r = await yiemIn(project("list", "load"), ["tools", "list"]);
    expect(r.signal).toBeNull();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\bhold\b/);
    expect(r.ms).toBeLessThan(10_000);
  });

  it("tools call: a tool whose execute adds a spinning exit listener and sets process.exitCode: exit 0 within the grace", async () => {
    const r = await yiemIn(project("call", "execute"), ["tools", "call", "hold"]);
    expect(r.signal).toBeNull();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("held\n");
    expect(r.ms).toBeLessThan(10_000);
  });

  it("batch: the same tool called by every item cannot hold the end of the batch", async () => {
    server = await startChatServer((request) =>
      (request.body.messages as Array<{ role: string }>).some((m) => m.role === "tool") ? reply.json({ content: "done" }) : reply.json({ toolCalls: [{ id: "h", name: "hold", arguments: "{}" }] }),
    );
    const root = project("batch", "execute", server.url);
    writeFileSync(join(root, "in.jsonl"), `${JSON.stringify({ id: "a", prompt: "hi" })}\n${JSON.stringify({ id: "b", prompt: "hi" })}\n`);
    const r = await yiemIn(root, ["batch", "-c", "agent.yaml", "in.jsonl", "-o", "out.jsonl", "--events", "none"]);
    expect(r.signal).toBeNull();
    expect(r.code, r.stderr).toBe(0);
    const results = readFileSync(join(root, "out.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as { id: string; status: string });
    expect(results.map((result) => [result.id, result.status]).sort()).toEqual([["a", "ok"], ["b", "ok"]]);
    expect(r.ms).toBeLessThan(10_000);
  });

  it("tools list: a tool module that never settles (the event loop drains) and spins at exit: exit 1 within the grace", async () => {
    const root = project("drained", "load");
    writeFileSync(join(root, "tools", "never.ts"), `${SPIN_AT_EXIT}\nawait new Promise(() => {});\nexport default { name: "never", label: "N", description: "d", inputSchema: { type: "object" }, execute: async () => "x" };\n`);
    // stderr is a plain message here (not NDJSON), so the process is spawned directly.
    const started = Date.now();
    const r = spawnSync(process.execPath, [yiemBin, "tools", "list"], { cwd: root, env: baseEnv({ YIEM_EXIT_GRACE_MS: "500" }), encoding: "utf8", timeout: 15_000 });
    expect(r.signal).toBeNull();
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/stopped before it finished/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("mcp serve: a tool module that adds a spinning exit listener at load cannot hold the exit once stdin ends", async () => {
    const r = await yiemIn(project("serve", "load"), ["mcp", "serve"], "");
    expect(r.signal).toBeNull();
    expect(r.code, r.stderr).toBe(0);
    expect(r.ms).toBeLessThan(10_000);
  });
});
