/**
 * `OPENAI_LOG` through the CLI: the openai package's own log lines are `debug` events of kind
 * `sdk` of the run they belong to (one per logger call, schema-valid, redacted), never console
 * text that the channel guard would blame on "tool or hook code"; stdout holds the answer alone.
 * Without OPENAI_LOG a good request logs nothing. The pretty and github views show them; a batch
 * item's lines are item events (with `--events ndjson`). The spawned process: test/e2e/sdk-log.test.ts.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream } from "../support/cli.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { batchProject, readResults } from "../support/batch.js";

const KEY = "sk-sdk-log-cli-key";
let dir: string;
let server: ChatServer | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-sdk-log-"));
  await writeFile(join(dir, "agent.config.yaml"), ["model:", "  name: test-model", "  baseURL: ${TEST_BASE_URL}", "  apiKeyEnv: TEST_API_KEY", "  maxRetries: 0", "builtinTools: []", ""].join("\n"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type SdkEvent = { type: "debug"; kind: "sdk"; level: string; message: string; runId: string };
const sdkEvents = (events: Array<{ type: string }>) => events.filter((e) => e.type === "debug" && (e as { kind?: string }).kind === "sdk") as unknown as SdkEvent[];

function run(env: Record<string, string>, args: string[] = []) {
  return runCliInProcess(["run", "hi", ...args], { cwd: dir, env: { TEST_BASE_URL: server!.url, TEST_API_KEY: KEY, ...env } });
}

describe("OPENAI_LOG in yiem run", () => {
  it("debug: each package log call is one sdk debug event of the run; stdout is the answer alone; no guard warnings; no key", async () => {
    server = await startChatServer([reply.stream({ toolCalls: [{ id: "c1", name: "nope", arguments: "{}" }] }), reply.stream({ content: "the answer" })]);
    const r = await run({ OPENAI_LOG: "debug" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("the answer\n");
    assertEventStream(r.events);
    const sdk = sdkEvents(r.events);
    // Two requests, three calls each: debug "sending request", info the status, debug "response start".
    expect(sdk.map((e) => e.level)).toEqual(["debug", "info", "debug", "debug", "info", "debug"]);
    expect(sdk[0].message).toMatch(/^\[log_\w+\] sending request \{ method: 'post', url: '/);
    expect(new Set(sdk.map((e) => e.runId))).toEqual(new Set([r.events[0].runId]));
    // Each request's lines come before its turn's messageEnd.
    const types = r.events.map((e) => (e.type === "debug" ? `debug:${String(e.kind)}` : e.type));
    expect(types.slice(0, 6)).toEqual(["agentStart", "turnStart", "debug:sdk", "debug:sdk", "debug:sdk", "messageEnd"]);
    expect(r.events.filter((e) => e.type === "warning")).toEqual([]);
    expect(r.stderr).not.toContain("tool or hook code wrote");
    expect(r.stderr).not.toContain(KEY);
    expect(r.stderr).not.toContain("Bearer");
    server.assertClean();
  });

  it("unset: no sdk events for a good request (the package's default level is warn)", async () => {
    server = await startChatServer([reply.stream({ content: "quiet" })]);
    const r = await run({});
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("quiet\n");
    assertEventStream(r.events);
    expect(sdkEvents(r.events)).toEqual([]);
    expect(r.events.filter((e) => e.type === "warning")).toEqual([]);
  });

  it("an unknown level: one sdk warn event (a debug event, not a warning), and the run goes on at warn", async () => {
    server = await startChatServer([reply.stream({ content: "ok" })]);
    const r = await run({ OPENAI_LOG: "verbose" });
    expect(r.code, r.stderr).toBe(0);
    assertEventStream(r.events);
    expect(sdkEvents(r.events)).toEqual([expect.objectContaining({ level: "warn", message: expect.stringContaining('OPENAI_LOG was set to "verbose"') })]);
    expect(r.events.filter((e) => e.type === "warning")).toEqual([]);
  });

  it("the pretty view shows each line once, marked openai and its level; the github view as ::debug:: lines", async () => {
    server = await startChatServer([reply.stream({ content: "pretty" }), reply.stream({ content: "github" })]);
    const pretty = await run({ OPENAI_LOG: "info" }, ["--events", "pretty"]);
    expect(pretty.code, pretty.stderr).toBe(0);
    expect(pretty.stdout).toBe("pretty\n");
    expect(pretty.stderr).toMatch(/^ {2}openai info \[log_\w+\] post http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions succeeded with status 200 in \d+ms$/m);
    expect(pretty.stderr.match(/openai info/g)).toHaveLength(1);
    const github = await run({ OPENAI_LOG: "info" }, ["--events", "github"]);
    expect(github.code, github.stderr).toBe(0);
    expect(github.stdout).toBe("github\n");
    expect(github.stderr).toMatch(/^::debug::yiem: openai package info: \[log_\w+\] post .* succeeded with status 200/m);
    expect(github.stderr).not.toMatch(/^::warning::/m);
  });
});

describe("OPENAI_LOG in yiem batch", () => {
  let batchDir: string;
  beforeAll(async () => {
    batchDir = await batchProject();
    await writeFile(join(batchDir, "in.jsonl"), `${JSON.stringify({ id: "one", prompt: "first" })}\n${JSON.stringify({ id: "two", prompt: "second" })}\n`);
  });
  afterAll(async () => {
    await rm(batchDir, { recursive: true, force: true });
  });

  it("each item's lines are its own sdk events (--events ndjson); no guard warnings; the key never shown", async () => {
    server = await startChatServer(() => reply.json({ content: "done" }));
    const r = await runCliInProcess(["batch", "in.jsonl", "-o", "out.jsonl", "--events", "ndjson", "--concurrency", "2"], {
      cwd: batchDir,
      env: { TEST_BASE_URL: server.url, TEST_API_KEY: KEY, OPENAI_LOG: "debug" },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    expect((await readResults(join(batchDir, "out.jsonl"))).map((result) => `${result.id}:${result.status}`).sort()).toEqual(["one:ok", "two:ok"]);
    for (const id of ["one", "two"]) {
      const own = r.events.filter((e) => e.itemId === id);
      const sdk = sdkEvents(own);
      expect(sdk.map((e) => e.level)).toEqual(["debug", "info", "debug"]);
      expect(new Set(sdk.map((e) => e.runId))).toEqual(new Set([own[0].runId]));
      expect(sdk[0].message).toContain(`"content":"${id === "one" ? "first" : "second"}"`);
    }
    expect(r.events.filter((e) => e.type === "warning")).toEqual([]);
    expect(r.stderr).not.toContain("tool or hook code wrote");
    expect(r.stderr).not.toContain(KEY);
  });
});
