/**
 * `--events github` through the CLI: what a workflow log gets from `yiem run`,
 * `yiem tools call` and a usage error, read back as the runner reads workflow commands.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";
import { workflowCommands } from "../support/github.js";

let dir: string;
let server: ChatServer | undefined;
const SECRET = "sk-test-secret-github-value";

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-cli-github-"));
  await mkdir(join(dir, "tools"), { recursive: true });
  await writeFile(join(dir, "package.json"), "{}");
  await writeFile(join(dir, "agent.config.yaml"), ["model:", "  name: test-model", "  baseURL: ${TEST_BASE_URL}", "  apiKeyEnv: TEST_API_KEY", "  maxRetries: 0", ""].join("\n"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const env = (s: ChatServer) => ({ TEST_BASE_URL: s.url, TEST_API_KEY: SECRET, GITHUB_WORKSPACE: dir });

describe("yiem run --events github", { timeout: 60_000 }, () => {
  it("a completed run prints the answer on stdout and only debug lines on stderr", async () => {
    server = await startChatServer([reply.stream({ content: "all good" })]);
    const r = await runCli(["run", "--events", "github", "hi"], { cwd: dir, env: env(server) });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("all good\n");
    const commands = workflowCommands(r.stderr);
    expect(commands.map((c) => c.name)).toEqual(["debug", "debug"]);
    expect(commands[1].data).toMatch(/^yiem completed \(run [0-9a-f-]+\): 1 turn, 0 tool calls/);
  });

  it("a model failure is one ::error:: on the spec file, with the server's text redacted", async () => {
    server = await startChatServer([reply.error(500, `upstream rejected key ${SECRET}`)]);
    const r = await runCli(["run", "--events", "github", "hi"], { cwd: dir, env: env(server) });
    expect(r.code).toBe(1);
    expect(r.stderr).not.toContain(SECRET);
    const errors = workflowCommands(r.stderr).filter((c) => c.name === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0].properties).toEqual({ title: "yiem failed: error", file: "agent.config.yaml" });
    expect(errors[0].data).toContain("upstream rejected key ***");
  });

  it("a tool glob that matches nothing is a ::warning::, and the run goes on", async () => {
    server = await startChatServer([reply.stream({ content: "done" })]);
    const r = await runCli(["run", "--events", "github", "--allow-tools", "nosuch", "hi"], { cwd: dir, env: env(server) });
    expect(r.code).toBe(0);
    const warnings = workflowCommands(r.stderr).filter((c) => c.name === "warning");
    expect(warnings).toEqual([{ name: "warning", properties: { title: "yiem: warning" }, data: expect.stringContaining('--allow-tools "nosuch" matches no tool') }]);
  });

  it("a limit (maxTurns) is an ::error:: too: the step fails with exit 3", async () => {
    server = await startChatServer([reply.stream({ toolCalls: [{ id: "c1", name: "listTools", arguments: "{}" }] })]);
    const r = await runCli(["run", "--events", "github", "--max-turns", "1", "hi"], { cwd: dir, env: env(server) });
    expect(r.code).toBe(3);
    const errors = workflowCommands(r.stderr).filter((c) => c.name === "error");
    expect(errors.map((c) => c.properties.title)).toEqual(["yiem failed: maxTurns"]);
  });

  it("a usage error is one ::error:: titled as such, exit 2", async () => {
    const r = await runCli(["run", "--events", "github", "--output", "xml", "hi"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(workflowCommands(r.stderr)).toEqual([{ name: "error", properties: { title: "yiem: usage error" }, data: expect.stringContaining("--output must be one of") }]);
  });

  it("a spec problem before the run is one ::error::, exit 2", async () => {
    const r = await runCli(["run", "--events", "github", "--temperature", "hot", "hi"], { cwd: dir, env: { TEST_BASE_URL: "http://127.0.0.1:9/v1", TEST_API_KEY: SECRET } });
    expect(r.code).toBe(2);
    const commands = workflowCommands(r.stderr);
    expect(commands).toHaveLength(1);
    expect(commands[0]).toMatchObject({ name: "error", properties: { title: "yiem failed: error" } });
    expect(commands[0].data).toContain("--temperature");
  });
});

describe("yiem tools call --events github", { timeout: 60_000 }, () => {
  it("an unknown tool is an ::error::, exit 2", async () => {
    const r = await runCli(["tools", "call", "nosuchtool", "--events", "github"], { cwd: dir, env: { TEST_BASE_URL: "http://127.0.0.1:9/v1" } });
    expect(r.code).toBe(2);
    const errors = workflowCommands(r.stderr).filter((c) => c.name === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0].data).toContain("nosuchtool");
  });
});

describe("yiem batch --events github", { timeout: 120_000 }, () => {
  const items = ["ok one", "fail two", "ok three"].map((prompt, i) => JSON.stringify({ id: `item-${i + 1}`, prompt })).join("\n") + "\n";

  it("a notice for the start and the end, one ::error:: per failed item named by its id, then the batch's ::error::", async () => {
    server = await startChatServer((request) => {
      const prompt = String(request.body.messages.at(-1)?.content);
      return prompt.startsWith("fail") ? reply.error(400, `refused: ${prompt} with ${SECRET}`) : reply.stream({ content: `answer to ${prompt}` });
    });
    await writeFile(join(dir, "items.jsonl"), items);
    const r = await runCli(["batch", "items.jsonl", "-o", "results.jsonl", "--events", "github"], { cwd: dir, env: env(server) });
    expect(r.code).toBe(1);
    expect(r.stderr).not.toContain(SECRET);
    const commands = workflowCommands(r.stderr).filter((c) => c.name !== "debug");
    expect(commands.map((c) => [c.name, c.properties.title])).toEqual([
      ["notice", "yiem batch"],
      ["error", 'yiem batch item "item-2" failed: error'],
      ["error", "yiem batch failed (exit 1)"],
    ]);
    expect(commands[0].data).toMatch(/^3 items, 4 at a time → .*results\.jsonl$/);
    expect(commands[1].data).toContain("refused: fail two with ***");
    expect(commands[2].data).toMatch(/^2 ok, 1 error, 0 limit, 0 aborted, 0 skipped; \d+ tokens; \d+ ms$/);
  });

  it("--shard auto says in its notice which variables it used; a clean batch ends with a notice", async () => {
    server = await startChatServer((request) => reply.stream({ content: `answer to ${String(request.body.messages.at(-1)?.content)}` }));
    await writeFile(join(dir, "items.jsonl"), items.replace("fail two", "ok two"));
    const r = await runCli(["batch", "items.jsonl", "-o", "results-auto.jsonl", "--shard", "auto", "--events", "github"], { cwd: dir, env: { ...env(server), YIEM_SHARD_INDEX: "0", YIEM_SHARD_COUNT: "1" } });
    expect(r.code, r.stderr).toBe(0);
    const commands = workflowCommands(r.stderr).filter((c) => c.name !== "debug");
    expect(commands.map((c) => [c.name, c.properties.title])).toEqual([["notice", "yiem batch"], ["notice", "yiem batch done"]]);
    expect(commands[0].data).toContain("shard 1/1 (from YIEM_SHARD_INDEX=0 (0-based), YIEM_SHARD_COUNT=1)");
  });

  it("an input problem before anything runs is one ::error::, exit 2", async () => {
    const r = await runCli(["batch", "no-such-input.jsonl", "-o", "results-none.jsonl", "--events", "github"], { cwd: dir, env: { TEST_BASE_URL: "http://127.0.0.1:9/v1", TEST_API_KEY: SECRET } });
    expect(r.code).toBe(2);
    const commands = workflowCommands(r.stderr);
    expect(commands.map((c) => c.name)).toEqual(["error"]);
    expect(commands[0].data).toContain("no-such-input.jsonl");
  });
});

describe("yiem mcp serve --events github", { timeout: 60_000 }, () => {
  it("a session that ends when stdin closes writes only workflow commands, no annotation", async () => {
    const r = await runCli(["mcp", "serve", "--events", "github"], { cwd: dir, stdin: "", env: { TEST_BASE_URL: "http://127.0.0.1:9/v1", TEST_API_KEY: SECRET } });
    expect(r.code, r.stderr).toBe(0);
    const commands = workflowCommands(r.stderr);
    expect(commands.length).toBeGreaterThan(0);
    expect(commands.filter((c) => c.name === "error" || c.name === "warning")).toEqual([]);
    expect(commands.at(-1)?.data).toMatch(/^yiem completed \(run /);
  });
});
