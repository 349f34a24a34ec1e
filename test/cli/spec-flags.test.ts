/**
 * Through the real CLI: the model and limit flags (`--temperature`,
 * `--max-tokens`, `--budget`, `--max-retries`, `--api-key-env`), the generic `--set
 * KEY.PATH=VALUE` (read as YAML, checked by the spec schema like the file, errors all at once and
 * naming the flag), flag > environment > spec precedence, `yiem config` sources, and `--system
 * @FILE` / `--append-system`. Each flag is checked in the request body the server received.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, type CliResult } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

const SHOUT = `import { defineTool, toolResult } from "yiem";
export default defineTool({
  name: "shout", label: "Shout", description: "Upper-cases a text",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  async execute(_id, args) { return toolResult(String(args.text).toUpperCase()); },
});
`;

const SPEC = `model:
  name: test-model
  baseURL: \${TEST_BASE_URL}
  apiKeyEnv: TEST_API_KEY
  maxRetries: 0
  timeoutMs: 5s
systemPrompt: Base prompt.
toolDirs: [tools]
limits: { maxTurns: 5 }
`;

let dir: string;
let server: ChatServer | undefined;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-spec-flags-"));
  await mkdir(join(dir, "tools"));
  await writeFile(join(dir, "tools", "shout.ts"), SHOUT);
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "spec-flags-fixture", private: true }));
  await writeFile(join(dir, "agent.config.yaml"), SPEC);
  await writeFile(join(dir, "system.md"), "From the file.\n");
  await writeFile(join(dir, "extra.md"), "Extra rules.\n");
});
afterAll(() => rm(dir, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function run(args: string[], env: Record<string, string | undefined> = {}, requireStart = true): Promise<CliResult & { end: Record<string, any> }> {
  const r = await runCli(["run", ...args], {
    cwd: dir,
    env: { TEST_BASE_URL: server?.url ?? "http://127.0.0.1:9/v1", TEST_API_KEY: "sk-flags-test", ...env },
  });
  assertEventStream(r.events, { requireStart });
  return Object.assign(r, { end: r.events.at(-1) as Record<string, any> });
}

async function config(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; json: any }> {
  const r = await runCli(["config", "--json", ...args], { cwd: dir, env: { TEST_BASE_URL: "http://127.0.0.1:9/v1", ...env } });
  return { code: r.code, stderr: r.stderr, json: r.code === 0 ? JSON.parse(r.stdout) : undefined };
}

describe("model and limit flags, in the request the server received", () => {
  it("--temperature and --max-tokens are sent as temperature and max_tokens", async () => {
    server = await startChatServer([reply.stream({ content: "ok" })]);
    const r = await run(["hi", "--temperature", "0.3", "--max-tokens", "50"]);
    expect(r.code, r.stderr).toBe(0);
    expect(server.requests[0]).toMatchObject({ temperature: 0.3, max_tokens: 50 });
    server.assertClean();
  });

  it("--max-retries overrides the spec's maxRetries: 0 (one retry after a 503)", async () => {
    server = await startChatServer([reply.error(503, "busy", { "retry-after-ms": "1" }), reply.stream({ content: "ok" })]);
    const r = await run(["hi", "--max-retries", "1"]);
    expect(r.code, r.stderr).toBe(0);
    expect(server.requests).toHaveLength(2);
    expect(r.events.filter((e) => e.type === "retry")).toHaveLength(1);
    server.assertClean();
  });

  it("without --max-retries the spec's 0 stands: the 503 ends the run", async () => {
    server = await startChatServer([reply.error(503, "busy", { "retry-after-ms": "1" }), reply.stream({ content: "ok" })]);
    const r = await run(["hi"]);
    expect(r.code).toBe(1);
    expect(server.requests).toHaveLength(1);
  });

  it("--budget is limits.maxTokens: a response over it stops the run (stopReason budget, exit 3)", async () => {
    server = await startChatServer([
      reply.json({ toolCalls: [{ name: "shout", arguments: '{"text":"a"}' }], usage: { prompt_tokens: 40, completion_tokens: 20 } }),
    ]);
    const r = await run(["hi", "--budget", "50"]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.end).toMatchObject({ stopReason: "budget" });
    expect(r.end.error).toBe("token budget exceeded: 60 > 50");
    expect(server.requests).toHaveLength(1);
  });

  it("--api-key-env NAME: the key is read from that variable and sent as the bearer token", async () => {
    server = await startChatServer([reply.stream({ content: "ok" })]);
    const r = await run(["hi", "--api-key-env", "OTHER_LLM_KEY"], { OTHER_LLM_KEY: "sk-other-key" });
    expect(r.code, r.stderr).toBe(0);
    expect(server.received[0].headers.authorization).toBe("Bearer sk-other-key");
    expect(r.stderr).not.toContain("sk-other-key");
    server.assertClean();
  });
});

describe("--set KEY.PATH=VALUE", () => {
  it("values are read as YAML: model.stream=false, a list for tools.deny, a number", async () => {
    server = await startChatServer([reply.json({ content: "ok" })]);
    const r = await run(["hi", "--set", "model.stream=false", "--set", 'tools.deny=["shout"]', "--set", "model.maxTokens=77"]);
    expect(r.code, r.stderr).toBe(0);
    expect(server.requests[0].stream).not.toBe(true);
    expect(server.requests[0].max_tokens).toBe(77);
    expect(server.requests[0].tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["listTools"]);
    server.assertClean();
  });

  it("a duration string (limits.toolTimeoutMs=3m) becomes milliseconds, and the source is flag", async () => {
    const r = await config(["--set", "limits.toolTimeoutMs=3m", "--set", "model.stream=false"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.limits.toolTimeoutMs).toBe(180_000);
    expect(r.json.model.stream).toBe(false);
    expect(r.json.sources).toMatchObject({ "limits.toolTimeoutMs": "flag", "model.stream": "flag", "model.maxRetries": "spec", "model.temperature": "default" });
  });

  it("a named flag wins over a --set of the same key", async () => {
    server = await startChatServer([reply.stream({ content: "ok" })]);
    const r = await run(["hi", "--set", "model.temperature=1.5", "--temperature", "0.2"]);
    expect(r.code, r.stderr).toBe(0);
    expect(server.requests[0].temperature).toBe(0.2);
  });

  it("flag > environment: --set model.baseURL beats OPENAI_BASE_URL, --set model.name beats YIEM_MODEL", async () => {
    server = await startChatServer([reply.stream({ content: "ok" })]);
    const r = await run(["hi", "--set", `model.baseURL=${server.url}`, "--set", "model.name=set-model"], {
      TEST_BASE_URL: "http://127.0.0.1:9/v1",
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
      YIEM_MODEL: "env-model",
    });
    expect(r.code, r.stderr).toBe(0);
    expect(server.requests[0].model).toBe("set-model");
    const c = await config(["--set", "model.name=set-model", "--set", "model.baseURL=http://127.0.0.1:1/v1"], { YIEM_MODEL: "env-model", OPENAI_BASE_URL: "http://x/v1" });
    expect(c.json.model).toMatchObject({ name: "set-model", baseURL: "http://127.0.0.1:1/v1" });
    expect(c.json.sources).toMatchObject({ "model.name": "flag", "model.baseURL": "flag" });
  });

  it("every bad value is reported at once, each naming its flag; an unknown key names the nearest; exit 2, no request", async () => {
    server = await startChatServer([reply.stream({ content: "never" })]);
    const r = await run(["hi", "--set", "model.strem=false", "--set", "limits.toolTimeoutMs=soon", "--temperature", "hot", "--set", "modle.stream=true", "--max-tokens", "-3"], {}, false);
    expect(r.code).toBe(2);
    expect(r.end.error).toBe([
      "5 problems:",
      '  --set model.strem: unknown key "strem" in "model" (did you mean "stream"?)',
      '  --set limits.toolTimeoutMs: "limits.toolTimeoutMs" must be a duration: milliseconds (1500) or a string like "500ms", "30s", "2m" (got "soon")',
      '  --set modle.stream: unknown key "modle" in the spec (did you mean "model"?)',
      '  --temperature: "model.temperature" must be a number from 0 to 2 (got "hot")',
      '  --max-tokens: "model.maxTokens" must be an integer >= 1 (got -3)',
    ].join("\n"));
    expect(server.requests).toHaveLength(0);
  });

  it("a --set without = and a bad key path are usage errors", async () => {
    const r = await config(["--set", "model.stream", "--set", "a..b=1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--set needs KEY.PATH=VALUE, like model.stream=false (got "model.stream")');
    expect(r.stderr).toContain('--set a..b: "a..b" is not a key path');
  });

  it("spec-file problems and flag problems come out in the same report", async () => {
    const bad = join(dir, "bad.yaml");
    await writeFile(bad, "model: { name: m, temperature: 9 }\n");
    const r = await config(["-c", bad, "--max-retries", "many"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('bad.yaml:1: "model.temperature" must be a number from 0 to 2 (got 9)');
    expect(r.stderr).toContain('--max-retries: "model.maxRetries" must be an integer');
  });

  it("without a spec file the flags' values are still checked, and --model names the model", async () => {
    const empty = await mkdtemp(join(tmpdir(), "yiem-no-spec-"));
    try {
      const ok = await runCli(["config", "--json", "-m", "m1", "--temperature", "0.5", "--set", "limits.maxTurns=4"], { cwd: empty });
      expect(ok.code, ok.stderr).toBe(0);
      const json = JSON.parse(ok.stdout);
      expect(json.model).toMatchObject({ name: "m1", temperature: 0.5 });
      expect(json.limits.maxTurns).toBe(4);
      const bad = await runCli(["config", "--set", "limits.maxTurns=0"], { cwd: empty });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toBe('yiem: --set limits.maxTurns: "limits.maxTurns" must be an integer >= 1 (got 0)\n');
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});

describe("--set of prompts and paths", () => {
  it("--set systemPromptFile=FILE resolves against the current folder and replaces the spec's systemPrompt", async () => {
    const sub = join(dir, "sub");
    await mkdir(sub, { recursive: true });
    await writeFile(join(sub, "prompt.md"), "Prompt from sub.");
    const r = await runCli(["config", "--json", "-c", "../agent.config.yaml", "--set", "systemPromptFile=prompt.md"], {
      cwd: sub,
      env: { TEST_BASE_URL: "http://127.0.0.1:9/v1" },
    });
    expect(r.code, r.stderr).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.systemPrompt).toBe("Prompt from sub.");
    expect(json.sources.systemPrompt).toBe("flag");
  });

  it("a --set file that is missing is reported as the flag's, with the path it looked at", async () => {
    const r = await config(["--set", "systemPromptFile=missing.md"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`yiem: --set systemPromptFile: system prompt file "${join(dir, "missing.md")}" not found (${join(dir, "missing.md")})\n`);
  });
});

describe("--system @FILE and --append-system", () => {
  it("--system @FILE sends the file's text as the system prompt", async () => {
    server = await startChatServer([reply.stream({ content: "ok" })]);
    const r = await run(["hi", "--system", "@system.md"]);
    expect(r.code, r.stderr).toBe(0);
    expect(server.requests[0].messages[0]).toEqual({ role: "system", content: "From the file.\n" });
  });

  it("--append-system TEXT is added to the spec's prompt after a blank line", async () => {
    server = await startChatServer([reply.stream({ content: "ok" })]);
    const r = await run(["hi", "--append-system", "Answer in French."]);
    expect(r.code, r.stderr).toBe(0);
    expect(server.requests[0].messages[0]).toEqual({ role: "system", content: "Base prompt.\n\nAnswer in French." });
  });

  it("--append-system @FILE with --system: appended to --system's prompt", async () => {
    server = await startChatServer([reply.stream({ content: "ok" })]);
    const r = await run(["hi", "--system", "Replaced.", "--append-system", "@extra.md"]);
    expect(r.code, r.stderr).toBe(0);
    expect(server.requests[0].messages[0]).toEqual({ role: "system", content: "Replaced.\n\nExtra rules.\n" });
  });

  it("a missing @FILE is a usage error naming the flag and file, with the other problems", async () => {
    const r = await run(["hi", "--system", "@nope.md", "--temperature", "7"], {}, false);
    expect(r.code).toBe(2);
    expect(r.end.error).toMatch(/--system: file "nope\.md" not found \(\/.*nope\.md\)/);
    expect(r.end.error).toContain("--temperature");
  });

  it("yiem config reports systemPrompt from a flag", async () => {
    const r = await runCli(["run", "--dry-run", "--append-system", "More.", "hi"], { cwd: dir, env: { TEST_BASE_URL: "http://127.0.0.1:9/v1" } });
    expect(r.code, r.stderr).toBe(0);
    const dry = JSON.parse(r.stdout);
    expect(dry.spec.systemPrompt).toBe("Base prompt.\n\nMore.");
  });
});

describe("a flag given more than once", () => {
  it("takes its last value (-c, --model, --max-turns), while a repeatable flag keeps every value in order", async () => {
    await writeFile(join(dir, "first.yaml"), `${SPEC}name: first\n`);
    await writeFile(join(dir, "second.yaml"), `${SPEC}name: second\n`);
    const c = await config(["-c", "first.yaml", "-c", "second.yaml"]);
    expect(c.code, c.stderr).toBe(0);
    expect(c.json.name).toBe("second");
    const m = await config(["--model", "m1", "--model", "m2"]);
    expect(m.code, m.stderr).toBe(0);
    expect(m.json.model.name).toBe("m2");
    const dry = await runCli(["run", "--dry-run", "--max-turns", "3", "--max-turns", "7", "hi"], { cwd: dir, env: { TEST_BASE_URL: "http://127.0.0.1:9/v1" } });
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout).spec.limits.maxTurns).toBe(7);
    const t = await config(["--tool-dir", "tools", "--tool-dir", "more-tools"]);
    expect(t.stderr).toContain('--tool-dir: tool folder "more-tools" not found');
    const sets = await config(["--set", "name=a", "--set", "name=b"]);
    expect(sets.json.name).toBe("b");
  });
});

describe("help", () => {
  it("yiem run --help lists the new flags, the number ones as [number]", async () => {
    const r = await runCli(["run", "--help"]);
    expect(r.code).toBe(0);
    for (const flag of ["--temperature", "--max-tokens", "--budget", "--max-retries", "--max-turns"]) {
      expect(r.stdout).toMatch(new RegExp(`${flag} .*\\[number\\]`));
    }
    for (const flag of ["--api-key-env", "--set", "--append-system"]) expect(r.stdout).toContain(flag);
  });

  it("a number flag without its value is a usage error, not ignored", async () => {
    for (const args of [["hi", "--temperature"], ["--budget", "--max-retries", "1", "hi"]]) {
      const r = await runCli(["run", "--events", "none", "--dry-run", ...args], { cwd: dir, env: { TEST_BASE_URL: "http://127.0.0.1:9/v1" } });
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toBe(`yiem: ${args.includes("--budget") ? "--budget" : "--temperature"} needs a value\n`);
    }
  });
});
