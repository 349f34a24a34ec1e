/**
 * The exit codes of the real binary, one spawned run per path (docs/reliability.md, "Exit
 * codes"): what `main` returns is what the process ends with. The same paths are covered in
 * depth in-process (test/cli/); signals to a real pid are in the signal battery.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, runCli } from "../support/cli.js";

/** The example tools (getTime). */
const TOOLS = fileURLToPath(new URL("../../tools", import.meta.url));
let dir: string;
let server: ChatServer | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-exit-codes-"));
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "exit-codes-fixture", private: true }));
  await writeFile(
    join(dir, "agent.config.yaml"),
    ["model:", "  name: test-model", "  baseURL: ${TEST_BASE_URL}", "  apiKeyEnv: TEST_API_KEY", "  maxRetries: 0", `toolDirs: [${JSON.stringify(TOOLS)}]`, ""].join("\n"),
  );
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const env = (s: ChatServer) => ({ TEST_BASE_URL: s.url, TEST_API_KEY: "sk-exit-codes" });

describe("the real binary's exit code", () => {
  it("0: a completed run", async () => {
    server = await startChatServer([reply.json({ content: "done" })]);
    const r = await runCli(["run", "go"], { cwd: dir, env: env(server) });
    expect(r).toMatchObject({ code: 0, signal: null, stdout: "done\n" });
    assertEventStream(r.events);
  });

  it("1: the model server fails", async () => {
    server = await startChatServer(() => reply.error(500, "down"));
    const r = await runCli(["run", "go"], { cwd: dir, env: env(server) });
    expect(r.code).toBe(1);
    assertEventStream(r.events);
    expect(r.events.at(-1)).toMatchObject({ stopReason: "error" });
  });

  it("2: a usage error (unknown flag), one agentEnd on stderr", async () => {
    const r = await runCli(["run", "--frobnicate", "go"], { cwd: dir });
    expect(r.code).toBe(2);
    assertEventStream(r.events, { requireStart: false });
    expect(r.events.at(-1)).toMatchObject({ stopReason: "error" });
  });

  it("2: a spec error", async () => {
    const r = await runCli(["config", "-c", join(dir, "missing.yaml")], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^yiem: /);
  });

  it("3: a limit (maxTurns) stops the run", async () => {
    server = await startChatServer((_req, i) => reply.json({ toolCalls: [{ id: `c${i}`, name: "getTime", arguments: "{}" }] }));
    const r = await runCli(["run", "--max-turns", "1", "go"], { cwd: dir, env: env(server) });
    expect(r.code).toBe(3);
    expect(r.events.at(-1)).toMatchObject({ stopReason: "maxTurns" });
  });

  it("0 for --help and the help text on stdout", async () => {
    const r = await runCli(["--help"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("yiem <command> [options]");
    expect(r.stderr).toBe("");
  });
});
