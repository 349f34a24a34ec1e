/**
 * Through the real binary: strict loading for CI (`--strict`, spec
 * `strict: true`, `yiem tools check`), every mistake reported at once before the API key is asked
 * for, tool globs that match nothing, and `--session`/`--record` into a folder that does not exist.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, type CliResult } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

let root: string;
let server: ChatServer | undefined;
let count = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "yiem-cli-strict-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const MANIFEST = (name: string, program: string) =>
  [`name: ${name}`, `label: ${name}`, "description: Runs a program.", "inputSchema: { type: object }", `command: [${JSON.stringify(program)}]`, ""].join("\n");

/** A project folder: agent.config.yaml from `spec` lines (a server model), plus `files`. */
async function project(spec: string[], files: Record<string, string> = {}): Promise<string> {
  const dir = join(root, `p${++count}`);
  await mkdir(join(dir, "tools"), { recursive: true });
  await writeFile(join(dir, "package.json"), "{}");
  await writeFile(join(dir, "agent.config.yaml"), [...spec, ""].join("\n"));
  for (const [file, text] of Object.entries(files)) {
    await mkdir(join(dir, file, ".."), { recursive: true });
    await writeFile(join(dir, file), text);
  }
  return dir;
}

const SERVER_MODEL = ["model:", "  name: test-model", "  baseURL: ${TEST_BASE_URL}", "  apiKeyEnv: TEST_API_KEY", "  maxRetries: 0"];

/** A project whose command tool points at a missing script and whose hook cannot be executed. */
async function brokenProject(extra: string[] = []): Promise<string> {
  const dir = await project([...SERVER_MODEL, "hooks:", "  beforeToolCall: { command: [./hooks/audit.sh] }", ...extra], {
    "tools/deploy.tool.yaml": MANIFEST("deploy", "./deploy.sh"),
    "tools/lint.tool.yaml": MANIFEST("lint", "no-such-program-for-yiem-tests"),
    "hooks/audit.sh": "#!/bin/sh\nexit 0\n",
  });
  await chmod(join(dir, "hooks/audit.sh"), 0o644);
  return dir;
}

/** For commands that call no model: the spec's ${TEST_BASE_URL} must still be set. */
const NO_SERVER = { TEST_BASE_URL: "http://127.0.0.1:9/v1" };
const serverEnv = (s: ChatServer) => ({ TEST_BASE_URL: s.url, TEST_API_KEY: "sk-test-secret-value" });

function loneEnd(r: CliResult): string {
  assertEventStream(r.events, { requireStart: false });
  expect(r.events).toHaveLength(1);
  expect(r.events[0]).toMatchObject({ type: "agentEnd", stopReason: "error" });
  return String(r.events[0].error);
}

describe("strict loading", { timeout: 60_000 }, () => {
  it("yiem tools check reports a command tool with a missing script or program, and a hook that cannot be executed", async () => {
    const dir = await brokenProject();
    const r = await runCli(["tools", "check"], { cwd: dir, env: NO_SERVER });
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toEqual([
      expect.stringMatching(/^tools\/deploy\.tool\.yaml: tool "deploy": program "\.\/deploy\.sh" \(.*\/tools\/deploy\.sh\) not found$/),
      'tools/lint.tool.yaml: tool "lint": program "no-such-program-for-yiem-tests" is not on PATH',
      expect.stringMatching(/^hooks\.beforeToolCall: program ".*\/hooks\/audit\.sh" is not executable \(chmod \+x\)$/),
      "3 problems (3 tools loaded from tools)",
    ]);
  });

  it("without --strict each problem is a warning event and the run goes on", async () => {
    const dir = await brokenProject();
    server = await startChatServer([reply.json({ content: "done" })]);
    const r = await runCli(["run", "--events", "ndjson", "hi"], { cwd: dir, env: serverEnv(server) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("done\n");
    assertEventStream(r.events);
    const warnings = r.events.filter((e) => e.type === "warning").map((e) => String(e.message));
    expect(warnings).toEqual([
      expect.stringMatching(/^tool "deploy": program "\.\/deploy\.sh" .* not found$/),
      expect.stringMatching(/^tool "lint": program "no-such-program-for-yiem-tests" is not on PATH$/),
      expect.stringMatching(/^hooks\.beforeToolCall: program .* is not executable/),
    ]);
  });

  it("--strict ends the run with exit 2 before the model is called, naming every problem", async () => {
    const dir = await brokenProject();
    await writeFile(join(dir, "tools", "broken.ts"), "export default {\n");
    server = await startChatServer([reply.json({ content: "must not be asked" })]);
    const r = await runCli(["run", "--strict", "--events", "ndjson", "hi"], { cwd: dir, env: serverEnv(server) });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(server.requests).toHaveLength(0);
    const lines = loneEnd(r).split("\n");
    expect(lines[0]).toBe("4 load problems (--strict), so the model was not called:");
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^ {2}tools\/broken\.ts: tool not loaded: /),
      expect.stringMatching(/^ {2}tools\/deploy\.tool\.yaml: tool "deploy": program "\.\/deploy\.sh" .* not found$/),
      '  tools/lint.tool.yaml: tool "lint": program "no-such-program-for-yiem-tests" is not on PATH',
      expect.stringMatching(/^ {2}hooks\.beforeToolCall: program .* is not executable/),
    ]);
  });

  it("spec strict: true does the same, --no-strict turns it off, and --dry-run is checked too", async () => {
    const dir = await brokenProject(["strict: true"]);
    server = await startChatServer([reply.json({ content: "relaxed" })]);
    const strict = await runCli(["run", "--events", "none", "hi"], { cwd: dir, env: serverEnv(server) });
    expect(strict.code).toBe(2);
    expect(strict.stderr).toMatch(/^yiem: 3 load problems \(strict: true in the spec\), so the model was not called:\n/);
    const dry = await runCli(["run", "--dry-run", "--events", "none", "hi"], { cwd: dir, env: serverEnv(server) });
    expect(dry.code).toBe(2);
    expect(dry.stdout).toBe("");
    expect(server.requests).toHaveLength(0);
    const relaxed = await runCli(["run", "--no-strict", "--events", "none", "hi"], { cwd: dir, env: serverEnv(server) });
    expect(relaxed.code, relaxed.stderr).toBe(0);
    expect(relaxed.stdout).toBe("relaxed\n");
  });

  it("--dry-run lists the load problems as yiem tools check words them", async () => {
    const dir = await brokenProject();
    const r = await runCli(["run", "--dry-run", "--events", "none", "hi"], { cwd: dir, env: { ...NO_SERVER, TEST_API_KEY: "sk-test" } });
    expect(r.code, r.stderr).toBe(0);
    const { problems } = JSON.parse(r.stdout) as { problems: Array<{ path?: string; reason: string }> };
    expect(problems).toEqual([
      { path: join(dir, "tools/deploy.tool.yaml"), reason: expect.stringMatching(/^tool "deploy": program "\.\/deploy\.sh" .* not found$/) },
      { path: join(dir, "tools/lint.tool.yaml"), reason: 'tool "lint": program "no-such-program-for-yiem-tests" is not on PATH' },
      { reason: expect.stringMatching(/^hooks\.beforeToolCall: program .* is not executable/) },
    ]);
  });

  it("--strict passes a project whose tools and hooks can all start", async () => {
    const dir = await project([...SERVER_MODEL, "hooks:", "  afterToolCall: { command: [./hooks/audit.sh] }"], {
      "tools/deploy.tool.yaml": MANIFEST("deploy", "./deploy.sh"),
      "tools/deploy.sh": "#!/bin/sh\necho deployed\n",
      "tools/lint.tool.yaml": MANIFEST("lint", "node"),
      "hooks/audit.sh": "#!/bin/sh\nexit 0\n",
    });
    await chmod(join(dir, "tools/deploy.sh"), 0o755);
    await chmod(join(dir, "hooks/audit.sh"), 0o755);
    server = await startChatServer([reply.json({ content: "all good" })]);
    const r = await runCli(["run", "--strict", "--events", "ndjson", "--allow-tools", "dep*,lint", "hi"], { cwd: dir, env: serverEnv(server) });
    expect(r.code, r.stderr).toBe(0);
    assertEventStream(r.events);
    expect(r.events.filter((e) => e.type === "warning")).toEqual([]);
    expect((await runCli(["tools", "check"], { cwd: dir, env: NO_SERVER })).stdout).toBe("ok: 3 tools loaded from tools, no problems\n");
  });
});

describe("every mistake at once, before the API key is asked for", { timeout: 60_000 }, () => {
  it("all spec errors, missing files, bad flag values and the missing prompt in one report; no key asked for", async () => {
    const dir = await project([
      "model:",
      "  name: gpt-4o-mini",
      "  baseUrl: http://localhost:11434/v1",
      "toolDir: [tools]",
      "systemPromptFile: prompts/missing.md",
      "limits:",
      "  maxTurn: 3",
    ]);
    const r = await runCli(["run", "--events", "ndjson", "--timeout", "soon", "--tool-dir", "nope"], { cwd: dir });
    expect(r.code).toBe(2);
    const lines = loneEnd(r).split("\n");
    expect(lines).toEqual([
      "7 problems:",
      '  no prompt: give it as words (yiem run "…"), pipe it on stdin, or use --input-format ndjson',
      '  agent.config.yaml:3: unknown key "baseUrl" in "model" (did you mean "baseURL"?)',
      '  agent.config.yaml:4: unknown key "toolDir" in the spec (did you mean "toolDirs"?)',
      '  agent.config.yaml:7: unknown key "maxTurn" in "limits" (did you mean "maxTurns"?)',
      expect.stringMatching(/^ {2}agent\.config\.yaml:5: systemPromptFile: system prompt file "prompts\/missing\.md" not found/),
      expect.stringMatching(/^ {2}--tool-dir: tool folder "nope" not found/),
      expect.stringMatching(/^ {2}--timeout: invalid duration "soon"/),
    ]);
    expect(lines.join("\n")).not.toContain("OPENAI_API_KEY");
  });

  it("the key is asked for once everything else is right", async () => {
    const dir = await project(["model: gpt-4o-mini"]);
    const r = await runCli(["run", "--events", "none", "hi"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^yiem: OPENAI_API_KEY is not set: model "gpt-4o-mini"/);
  });

  it("--max-turn is a typo of --max-turns; --max-tools is another word and gets no suggestion", async () => {
    const dir = await project(["model: gpt-4o-mini"]);
    const typo = await runCli(["run", "--events", "none", "--max-turn", "3", "hi"], { cwd: dir });
    expect(typo.stderr).toBe("yiem: unknown flag --max-turn for yiem run (did you mean --max-turns?)\n");
    const other = await runCli(["run", "--events", "none", "--max-tools", "300", "hi"], { cwd: dir });
    expect(other.code).toBe(2);
    expect(other.stderr).toBe("yiem: unknown flag --max-tools for yiem run\n");
  });
});

describe("tool globs that match nothing, and --session into a missing folder", { timeout: 60_000 }, () => {
  it("--allow-tools and --deny-tools globs that match no tool are warnings, with the nearest tool name", async () => {
    const dir = await project([...SERVER_MODEL, "tools: { deny: [getSecret*] }"]);
    server = await startChatServer([reply.json({ content: "ok" })]);
    const r = await runCli(["run", "--events", "ndjson", "--allow-tools", "nosuch,listTool", "hi"], { cwd: dir, env: serverEnv(server) });
    expect(r.code, r.stderr).toBe(0);
    assertEventStream(r.events);
    expect(r.events.filter((e) => e.type === "warning").map((e) => e.message)).toEqual([
      '--allow-tools "nosuch" matches no tool (tools: listTools)',
      '--allow-tools "listTool" matches no tool (did you mean listTools?)',
      'tools.deny "getSecret*" matches no tool (tools: listTools)',
    ]);
  });

  it("under --strict a glob that matches nothing is an error, exit 2", async () => {
    const dir = await project(SERVER_MODEL);
    server = await startChatServer([reply.json({ content: "must not be asked" })]);
    const r = await runCli(["run", "--strict", "--events", "ndjson", "--allow-tools", "nosuch", "hi"], { cwd: dir, env: serverEnv(server) });
    expect(r.code).toBe(2);
    expect(server.requests).toHaveLength(0);
    expect(loneEnd(r)).toBe('1 load problem (--strict), so the model was not called:\n  --allow-tools "nosuch" matches no tool (tools: listTools)');
  });

  it("--session and --record into a folder that does not exist: exit 2 naming the folder, nothing created", async () => {
    const dir = await project(SERVER_MODEL);
    server = await startChatServer([reply.json({ content: "must not be asked" })]);
    const r = await runCli(["run", "--events", "none", "--session", "chats/today.json", "--record", "runs/today.jsonl", "hi"], { cwd: dir, env: serverEnv(server) });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "yiem: 2 problems:\n" +
        `  session file chats/today.json: its folder ${join(dir, "chats")} does not exist (yiem does not create folders)\n` +
        `  record file runs/today.jsonl: its folder ${join(dir, "runs")} does not exist (yiem does not create folders)\n`,
    );
    expect(server.requests).toHaveLength(0);
    expect(existsSync(join(dir, "chats"))).toBe(false);
    expect(existsSync(join(dir, "runs"))).toBe(false);
  });
});
