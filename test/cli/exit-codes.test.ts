/**
 * Every documented exit code (docs/cli.md, "Exit codes") reached once through the CLI, in-process
 * (`main(argv, io)`): the code, and the agentEnd that says why. The compat and reliability
 * matrices check their rows below the CLI; the real binary's codes are test/e2e/exit-codes.test.ts.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream } from "../support/cli.js";
import { runCliInProcess } from "../support/cli-in-process.js";

/** The example tools (getTime). */
const TOOLS = fileURLToPath(new URL("../../tools", import.meta.url));
let dir: string;
let server: ChatServer | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-exit-paths-"));
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "exit-paths-fixture", private: true }));
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

const env = (s: ChatServer) => ({ TEST_BASE_URL: s.url, TEST_API_KEY: "sk-exit-paths" });

describe("exit codes through the CLI", () => {
  it("0: the model answered (completed)", async () => {
    server = await startChatServer([reply.json({ content: "done" })]);
    const r = await runCliInProcess(["run", "go"], { cwd: dir, env: env(server) });
    expect(r).toMatchObject({ code: 0, stdout: "done\n" });
    assertEventStream(r.events);
    expect(r.events.at(-1)).toMatchObject({ stopReason: "completed" });
  });

  it("1: a runtime failure (the model server fails), stdout empty", async () => {
    server = await startChatServer([reply.error(500, "down")]);
    const r = await runCliInProcess(["run", "go"], { cwd: dir, env: env(server) });
    expect(r).toMatchObject({ code: 1, stdout: "" });
    assertEventStream(r.events);
    expect(r.events.at(-1)).toMatchObject({ stopReason: "error", error: expect.stringContaining("HTTP 500") });
  });

  it("2: a usage error (unknown flag) is one agentEnd, no model call", async () => {
    const r = await runCliInProcess(["run", "--frobnicate", "go"], { cwd: dir });
    expect(r).toMatchObject({ code: 2, stdout: "" });
    assertEventStream(r.events, { requireStart: false });
    expect(r.events).toHaveLength(1);
    expect(r.events[0]).toMatchObject({ type: "agentEnd", stopReason: "error", error: expect.stringContaining("--frobnicate") });
  });

  it("2: a spec error names the file", async () => {
    const r = await runCliInProcess(["config", "-c", join(dir, "missing.yaml")], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^yiem: .*missing\.yaml/);
  });

  it("3: a limit (maxTurns) stops the run", async () => {
    server = await startChatServer((_req, i) => reply.json({ toolCalls: [{ id: `c${i}`, name: "getTime", arguments: "{}" }] }));
    const r = await runCliInProcess(["run", "--max-turns", "1", "go"], { cwd: dir, env: env(server) });
    expect(r).toMatchObject({ code: 3, stdout: "" });
    assertEventStream(r.events);
    expect(r.events.at(-1)).toMatchObject({ stopReason: "maxTurns" });
  });

  it.each([
    ["SIGHUP", 129],
    ["SIGINT", 130],
    ["SIGQUIT", 131],
    ["SIGTERM", 143],
  ] as const)("%s while the model thinks: agentEnd aborted, exit %i", async (signal, code) => {
    server = await startChatServer([reply.hang()]);
    const s = server;
    const r = await runCliInProcess(["run", "go"], {
      cwd: dir,
      env: env(s),
      onSignals: (signals) => {
        const poll = setInterval(() => {
          if (s.requests.length === 1) {
            clearInterval(poll);
            signals.emit(signal, signal);
          }
        }, 10);
      },
    });
    expect(r).toMatchObject({ code, stdout: "" });
    assertEventStream(r.events);
    expect(r.events.at(-1)).toMatchObject({ stopReason: "aborted" });
  });
});
