/**
 * Seed fidelity through the CLI: `yiem tools call` frames its
 * events with agentStart/agentEnd and redacts secrets like `run`; listTools never lists a denied
 * tool (spec `tools.deny`, `--deny-tools`); a command afterToolCall hook may set usage.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

const API_KEY = "sk-fidelity-4b1e9d7c3a";
const TOKEN = "tok-fidelity-8c2f6a0e5d";
let dir: string;
let spec: string;
let server: ChatServer | undefined;

const env = (extra: Record<string, string> = {}) => ({ LLM_ACCESS: API_KEY, MY_SERVICE_TOKEN: TOKEN, ...extra });
const tools = (args: string[]) => runCli(["tools", ...args, "-c", spec], { cwd: dir, env: env(), timeoutMs: 30_000 });
const noSecrets = (...texts: string[]) => {
  for (const text of texts) for (const secret of [API_KEY, TOKEN]) expect(text).not.toContain(secret);
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "yiem-fidelity-cli-"));
  mkdirSync(join(dir, "tools"));
  writeFileSync(
    join(dir, "tools", "leaky.mjs"),
    `export default {
  name: "leaky", label: "Leaky", description: "Says what it should not.",
  inputSchema: { type: "object", properties: { fail: { type: "boolean" }, n: { type: "integer" } }, additionalProperties: false },
  execute(_id, args, _signal, onPartial) {
    const said = "key=" + process.env.LLM_ACCESS + " token=" + process.env.MY_SERVICE_TOKEN;
    onPartial("partial " + said);
    if (args.fail) throw new Error("failed with " + said);
    return { content: [{ type: "text", text: said }], details: { said }, usage: { promptTokens: 4, completionTokens: 2 } };
  },
};
`,
  );
  writeFileSync(
    join(dir, "tools", "hiddenAdmin.mjs"),
    'export default { name: "hiddenAdmin", label: "Hidden", description: "Denied by the spec.", inputSchema: { type: "object" }, execute() { return "admin"; } };\n',
  );
  writeFileSync(join(dir, "audit.sh"), '#!/bin/sh\ncat >/dev/null\necho \'{"usage": {"promptTokens": 50, "completionTokens": 5}}\'\n', { mode: 0o755 });
  spec = join(dir, "agent.config.yaml");
  writeFileSync(
    spec,
    [
      "model:",
      "  name: test-model",
      '  baseURL: "${TEST_BASE_URL:-http://127.0.0.1:9/v1}"',
      "  apiKeyEnv: LLM_ACCESS",
      "  maxRetries: 0",
      "toolDirs: [tools]",
      "builtinTools: [listTools]",
      'tools: { deny: ["hidden*"] }',
      "",
    ].join("\n"),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("yiem tools call frames its events like a run", { timeout: 120_000 }, () => {
  it("agentStart first, agentEnd last with the tool's usage; valid against the events schema", async () => {
    const r = await tools(["call", "leaky", "--events", "ndjson"]);
    expect(r.code).toBe(0);
    assertEventStream(r.events);
    expect(r.events.map((e) => e.type)).toEqual(["agentStart", "toolExecutionStart", "toolExecutionUpdate", "toolExecutionEnd", "agentEnd"]);
    expect(r.events[0]).toMatchObject({ model: "none", tools: ["leaky"], toolExecution: "sequential", configPath: spec });
    expect(r.events.at(-1)).toMatchObject({ stopReason: "completed", turns: 0, toolCalls: 1, usage: { promptTokens: 4, completionTokens: 2, totalTokens: 6 } });
  });

  it("an error result ends with stopReason error (exit 1); invalid arguments with toolCallRejected then agentEnd (exit 2)", async () => {
    const failed = await tools(["call", "leaky", "--args", '{"fail": true}', "--events", "ndjson"]);
    expect(failed.code).toBe(1);
    assertEventStream(failed.events);
    expect(failed.events.at(-1)).toMatchObject({ stopReason: "error", error: expect.stringMatching(/^Tool "leaky" failed: failed with key=\*\*\* token=\*\*\*/) });
    const invalid = await tools(["call", "leaky", "--args", '{"n": "x"}', "--events", "ndjson"]);
    expect(invalid.code).toBe(2);
    assertEventStream(invalid.events);
    expect(invalid.events.map((e) => e.type)).toEqual(["agentStart", "toolCallRejected", "agentEnd"]);
    const unknown = await tools(["call", "nope", "--events", "ndjson"]);
    expect(unknown.code).toBe(2);
    assertEventStream(unknown.events);
    expect(unknown.events[0]).toMatchObject({ type: "agentStart", tools: [] });
  });

  it("a problem before the call starts (unreadable --args file) is a lone agentEnd", async () => {
    const r = await tools(["call", "leaky", "--args", "@missing.json", "--events", "ndjson"]);
    expect(r.code).toBe(2);
    assertEventStream(r.events, { requireStart: false });
    expect(r.events).toEqual([expect.objectContaining({ type: "agentEnd", stopReason: "error", error: expect.stringMatching(/--args: file "missing\.json" not found/) })]);
  });
});

describe("yiem tools call redacts secrets like run", { timeout: 120_000 }, () => {
  it("in events, partial results, details and stdout (text and json)", async () => {
    const text = await tools(["call", "leaky", "--events", "ndjson"]);
    noSecrets(text.stdout, text.stderr);
    expect(text.stdout).toBe("key=*** token=***\n");
    expect(text.events.find((e) => e.type === "toolExecutionUpdate")).toMatchObject({ partialResult: { content: [{ text: "partial key=*** token=***" }] } });
    expect(text.events.find((e) => e.type === "toolExecutionEnd")).toMatchObject({ result: { details: { said: "key=*** token=***" } } });
    const json = await tools(["call", "leaky", "--output", "json", "--events", "pretty"]);
    noSecrets(json.stdout, json.stderr);
    expect(JSON.parse(json.stdout)).toMatchObject({ content: [{ text: "key=*** token=***" }], details: { said: "key=*** token=***" }, isError: false });
  });

  it("in rejection reasons, also with --events none", async () => {
    const args = JSON.stringify({ n: API_KEY });
    const ndjson = await tools(["call", "leaky", "--args", args, "--events", "ndjson"]);
    expect(ndjson.code).toBe(2);
    noSecrets(ndjson.stdout, ndjson.stderr);
    expect(ndjson.events.find((e) => e.type === "toolCallRejected")?.reason).toContain("***");
    const plain = await tools(["call", "leaky", "--args", args, "--events", "none"]);
    expect(plain.code).toBe(2);
    noSecrets(plain.stdout, plain.stderr);
    expect(plain.stderr).toContain("***");
  });
});

describe("listTools never lists a denied tool", { timeout: 120_000 }, () => {
  it("tools call listTools hides what the spec denies", async () => {
    const r = await tools(["call", "listTools", "--events", "none"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Available tools:\n- listTools: /);
    expect(r.stdout).toContain("- leaky: Leaky — Says what it should not.");
    expect(r.stdout).not.toContain("hiddenAdmin");
  });

  it("run: the model's listTools result hides what the spec denies, or --deny-tools (which replaces the spec's list)", async () => {
    const listed = async (flags: string[]) => {
      server = await startChatServer([reply.json({ toolCalls: [{ id: "l", name: "listTools", arguments: "{}" }] }), reply.json({ content: "listed" })]);
      const r = await runCli(["run", "-c", spec, ...flags, "--events", "ndjson", "what can you do?"], {
        cwd: dir,
        env: env({ TEST_BASE_URL: server.url }),
        timeoutMs: 30_000,
      });
      expect(r.code).toBe(0);
      assertEventStream(r.events);
      const end = r.events.find((e) => e.type === "toolExecutionEnd") as unknown as { result: { content: Array<{ text: string }>; details: Array<{ name: string }> } };
      const sent = JSON.stringify(server.requests[1]);
      await server.close();
      server = undefined;
      return { text: end.result.content[0].text, names: end.result.details.map((t) => t.name), sent };
    };
    const bySpec = await listed([]);
    expect(bySpec.names).toEqual(["listTools", "leaky"]);
    expect(bySpec.text).toMatch(/^Available tools:\n- listTools: List tools — .*\n- leaky: Leaky — Says what it should not\.$/);
    expect(bySpec.sent).not.toContain("hiddenAdmin");
    const byFlag = await listed(["--deny-tools", "leak*"]);
    expect(byFlag.names).toEqual(["listTools", "hiddenAdmin"]);
    expect(byFlag.sent).not.toContain("- leaky");
  });
});

describe("an invalid tool schema is a load problem in run", { timeout: 120_000 }, () => {
  it("a warning event names the file; the tool is not offered to the model; the run goes on", async () => {
    const badDir = join(dir, "bad-tools");
    mkdirSync(badDir, { recursive: true });
    writeFileSync(join(badDir, "broken.mjs"), 'export default { name: "broken", label: "B", description: "B", inputSchema: { type: "object", properties: { a: { minimum: "one" } } }, execute() { return "x"; } };\n');
    server = await startChatServer([reply.json({ content: "fine" })]);
    const r = await runCli(["run", "-c", spec, "--tool-dir", badDir, "--tool-dir", join(dir, "tools"), "--events", "ndjson", "hi"], {
      cwd: dir,
      env: env({ TEST_BASE_URL: server.url }),
      timeoutMs: 30_000,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("fine\n");
    assertEventStream(r.events);
    expect(r.events[0].tools).toEqual(["listTools", "leaky"]);
    expect(r.events[1]).toMatchObject({ type: "warning", path: join(badDir, "broken.mjs"), message: expect.stringMatching(/^tool not loaded: tool "broken": invalid inputSchema: schema\/properties\/a\/minimum must be number/) });
    expect(JSON.stringify(server.requests[0])).not.toContain('"broken"');
  });
});

describe("command hooks", { timeout: 120_000 }, () => {
  it("an afterToolCall command hook may set the call's usage (stdout key usage)", async () => {
    const hooked = join(dir, "hooked.yaml");
    writeFileSync(hooked, [
      "model:", "  name: test-model", '  baseURL: "${TEST_BASE_URL}"', "  apiKeyEnv: LLM_ACCESS", "  maxRetries: 0",
      "toolDirs: [tools]", "builtinTools: []", "hooks:", "  afterToolCall: { command: [./audit.sh] }", "",
    ].join("\n"));
    server = await startChatServer([
      reply.json({ toolCalls: [{ id: "a", name: "leaky", arguments: "{}" }], usage: { prompt_tokens: 10, completion_tokens: 1 } }),
      reply.json({ content: "done", usage: { prompt_tokens: 10, completion_tokens: 1 } }),
    ]);
    const r = await runCli(["run", "-c", hooked, "--events", "ndjson", "go"], { cwd: dir, env: env({ TEST_BASE_URL: server.url }), timeoutMs: 30_000 });
    expect(r.code).toBe(0);
    assertEventStream(r.events);
    expect(r.events.at(-1)).toMatchObject({ usage: { promptTokens: 70, completionTokens: 7, totalTokens: 77 } });
  });
});
