/**
 * The CLI as a function: `main(argv, io)` returns the exit code and never ends the process; its
 * signals come from `io.signals`; calls in one process share no state; errors map to exit codes
 * by their kind (src/cli/exit-codes.ts `exitCodeForError`), never by their name.
 */
import { mkdtemp, rm, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/errors.js";
import { UsageError, YiemError } from "../../src/errors.js";
import { exitCodeForError } from "../../src/cli/exit-codes.js";
import { McpRequiredError } from "../../src/mcp/required-error.js";
import { ToolDraftError } from "../../src/tools/generator.js";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream } from "../support/cli.js";
import { runCliInProcess } from "../support/cli-in-process.js";

const WAIT_TOOL = `import { defineTool, toolResult } from "yiem";
export default defineTool({
  name: "wait", label: "Wait", description: "Waits until aborted",
  inputSchema: { type: "object" },
  async execute(_id, _args, signal) {
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    return toolResult("stopped");
  },
});
`;

let dir: string;
let server: ChatServer | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-main-io-"));
  await mkdir(join(dir, "tools"));
  await writeFile(join(dir, "tools", "wait.ts"), WAIT_TOOL);
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "main-io-fixture", private: true }));
  await writeFile(
    join(dir, "agent.config.yaml"),
    ["model:", "  name: test-model", "  baseURL: ${TEST_BASE_URL}", "  apiKeyEnv: TEST_API_KEY", "  maxRetries: 0", "toolDirs: [tools]", ""].join("\n"),
  );
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const env = (s: ChatServer, key = "sk-main-io-first") => ({ TEST_BASE_URL: s.url, TEST_API_KEY: key });

describe("main(argv, io)", () => {
  it("returns the exit code of each call and leaves the process running: three calls in a row, 2, 0, 2", async () => {
    const first = await runCliInProcess(["run", "--frobnicate", "go"], { cwd: dir });
    server = await startChatServer([reply.json({ content: "done" })]);
    const second = await runCliInProcess(["run", "go"], { cwd: dir, env: env(server) });
    const third = await runCliInProcess(["config", "-c", join(dir, "missing.yaml")], { cwd: dir });
    expect([first.code, second.code, third.code]).toEqual([2, 0, 2]);
    expect(second.stdout).toBe("done\n");
    assertEventStream(second.events);
  });

  it("a SIGTERM from io.signals aborts the run: agentEnd aborted, code 143", async () => {
    server = await startChatServer([reply.json({ toolCalls: [{ id: "w", name: "wait", arguments: "{}" }] }), reply.json({ content: "never" })]);
    const r = await runCliInProcess(["run", "go"], {
      cwd: dir,
      env: env(server),
      onSignals: (signals) => {
        const poll = setInterval(() => {
          if (server!.requests.length === 1) {
            clearInterval(poll);
            setTimeout(() => signals.emit("SIGTERM", "SIGTERM"), 100);
          }
        }, 20);
      },
    });
    expect(r.code).toBe(143);
    assertEventStream(r.events);
    expect(r.events.at(-1)).toMatchObject({ stopReason: "aborted" });
  });

  it("calls share no redactor: a second call's API key is hidden in its output, the first's key is not taken along", async () => {
    server = await startChatServer([reply.json({ content: "key sk-main-io-first" }), reply.json({ content: "key sk-main-io-second and sk-main-io-first" })]);
    const one = await runCliInProcess(["run", "go"], { cwd: dir, env: env(server, "sk-main-io-first") });
    const two = await runCliInProcess(["run", "go"], { cwd: dir, env: env(server, "sk-main-io-second") });
    expect(one.stdout).not.toContain("sk-main-io-first");
    expect(two.stdout).not.toContain("sk-main-io-second");
    // The first call's key is no secret of the second call: it is printed as the model wrote it.
    expect(two.stdout).toContain("sk-main-io-first");
  });
});

describe("exitCodeForError: the one mapping of error kinds to exit codes", () => {
  it("usage 2, config 2, runtime 1, limit 3, signal 128 + its number; anything else 1", () => {
    expect(exitCodeForError(new UsageError("bad flag"))).toBe(2);
    expect(exitCodeForError(new ConfigError("bad spec"))).toBe(2);
    expect(exitCodeForError(new ToolDraftError("bad draft"))).toBe(2);
    expect(exitCodeForError(new McpRequiredError([], []))).toBe(1);
    expect(exitCodeForError(new YiemError("turns", "limit"))).toBe(3);
    expect(exitCodeForError(new YiemError("stopped", "signal", { signal: "SIGTERM" }))).toBe(143);
    expect(exitCodeForError(new YiemError("stopped", "signal", { signal: "SIGHUP" }))).toBe(129);
    expect(exitCodeForError(new Error("boom"))).toBe(1);
    expect(exitCodeForError("a string")).toBe(1);
  });

  it("goes by the kind, not the name: an Error named UsageError is exit 1", () => {
    const impostor = new Error("named like a usage error");
    impostor.name = "UsageError";
    expect(exitCodeForError(impostor)).toBe(1);
  });
});
