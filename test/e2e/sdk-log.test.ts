/**
 * `OPENAI_LOG=debug` in real processes: the openai package's log lines never reach stdout. `yiem
 * run`'s stdout is the answer and nothing else, every stderr line is a schema-valid event (the
 * lines are sdk `debug` events, no guard warning); `yiem mcp serve --agent`'s stdout carries only
 * JSON-RPC messages while the agent run's lines are events on its stderr. The in-process cases:
 * test/cli/sdk-log.test.ts.
 */
import { rm } from "node:fs/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, parseNdjson, pipelineProject, runCli } from "../support/cli.js";
import { INIT, INITIALIZED, serveProject, spawnServe, until } from "../support/mcp-serve.js";

const KEY = "sk-test-sdk-log-e2e";
let dir: string;
let server: ChatServer | undefined;

beforeAll(async () => {
  dir = await pipelineProject("yiem-sdk-log-e2e-");
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const isSdk = (e: Record<string, unknown>) => e.type === "debug" && e.kind === "sdk";

describe("OPENAI_LOG=debug in a spawned yiem", () => {
  it("run: stdout is the answer alone; stderr is events only, the package's lines among them", async () => {
    server = await startChatServer([reply.stream({ content: "pure answer" })]);
    const r = await runCli(["run", "hi"], { cwd: dir, timeoutMs: 30_000, env: { TEST_BASE_URL: server.url, TEST_API_KEY: KEY, OPENAI_LOG: "debug" } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("pure answer\n");
    assertEventStream(r.events);
    expect(r.events.filter(isSdk).map((e) => e.level)).toEqual(["debug", "info", "debug"]);
    expect(r.events.filter((e) => e.type === "warning")).toEqual([]);
    expect(r.stderr).not.toContain(KEY);
  });

  it("mcp serve --agent: stdout carries JSON-RPC only; the agent run's lines are events on stderr", async () => {
    server = await startChatServer([reply.json({ content: "agent answer" })]);
    const project = await serveProject({ builtinTools: [] });
    try {
      const served = spawnServe(project, ["--agent", "helper"], { TEST_BASE_URL: server.url, OPENAI_LOG: "debug" });
      served.send(INIT);
      await until(() => served.stdout().includes('"id":1'), 20_000, "the initialize answer");
      served.send(INITIALIZED);
      served.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "helper", arguments: { prompt: "go" } } });
      await until(() => served.stdout().includes('"id":2'), 20_000, "the tool call's answer");
      served.child.stdin!.end();
      const exit = await served.exit;
      expect(exit.code, served.stderr()).toBe(0);
      const messages = served.stdout().split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Record<string, any>);
      for (const message of messages) expect(message.jsonrpc).toBe("2.0");
      expect(messages.find((m) => m.id === 2)?.result?.content).toEqual([{ type: "text", text: "agent answer" }]);
      const events = parseNdjson(served.stderr());
      expect(events.filter(isSdk).map((e) => e.level)).toEqual(["debug", "info", "debug"]);
      // The project's fixture tools include one that prints when loaded (the guard's warning); none is the package's.
      expect(events.filter((e) => e.type === "warning" && /\[log_/.test(String(e.message)))).toEqual([]);
      expect(served.stderr()).not.toContain("sk-serve-test-secret");
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });
});
