/**
 * Through the real CLI against the scripted server: `--output-schema`
 * and spec `output` in both modes (valid at once, invalid then fixed, invalid until the retries
 * run out → outputInvalid exit 3, prose instead of the tool, a server that refuses
 * response_format), stdout piped into jq, `--output json`'s `structured`, and every request body
 * checked against the official wire schema (assertClean).
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, baseEnv, yiemBin, type CliResult } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";
import { profiles } from "../support/server-profiles.js";

const SCHEMA = {
  type: "object",
  properties: { label: { type: "string", enum: ["bug", "feature", "question"] }, confidence: { type: "number", minimum: 0, maximum: 1 } },
  required: ["label", "confidence"],
  additionalProperties: false,
};

const SPEC = `model:
  name: test-model
  baseURL: \${TEST_BASE_URL}
  apiKeyEnv: TEST_API_KEY
  maxRetries: 0
  timeoutMs: 5s
systemPrompt: You classify issues.
limits: { maxTurns: 8 }
`;

let dir: string;
let server: ChatServer | undefined;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-structured-"));
  await writeFile(join(dir, "agent.config.yaml"), SPEC);
  await writeFile(join(dir, "schema.json"), JSON.stringify(SCHEMA));
  await writeFile(join(dir, "zero.yaml"), `${SPEC}output: { schema: schema.json, retries: 0 }\n`);
  await mkdir(join(dir, "native"));
  await writeFile(join(dir, "native", "agent.config.yaml"), `${SPEC}builtinTools: []\noutput:\n  schema: ../schema.json\n  mode: native\n  retries: 1\n`);
  await writeFile(join(dir, "native", "with-tools.yaml"), `${SPEC}output:\n  schema: ../schema.json\n  mode: native\n`);
  await mkdir(join(dir, "bad"));
  await writeFile(join(dir, "bad", "agent.config.yaml"), `${SPEC}output:\n  schema: { type: object, properties: { a: { type: nope } } }\n`);
});
afterAll(() => rm(dir, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function run(args: string[], cwd = dir): Promise<CliResult & { end: Record<string, any> }> {
  const r = await runCli(["run", ...args], { cwd, env: { TEST_BASE_URL: server?.url ?? "http://127.0.0.1:9/v1", TEST_API_KEY: "sk-structured" } });
  assertEventStream(r.events, { requireStart: false });
  return Object.assign(r, { end: r.events.at(-1) as Record<string, any> });
}

const finalCall = (args: unknown, id = "call_f") => ({ id, name: "finalAnswer", arguments: JSON.stringify(args) });

describe("--output-schema, tool mode (the default)", () => {
  it("a valid finalAnswer call ends the run: stdout is the value on one line, piped into jq", async () => {
    server = await startChatServer([reply.stream({ toolCalls: [finalCall({ label: "bug", confidence: 0.9 })] })]);
    const jq = await jqPath();
    const out = await pipeIntoJq(["run", "--output-schema", "schema.json", "Classify: it crashes"], [jq, ".label"], server.url);
    expect(out.yiemCode, out.stderr).toBe(0);
    expect(out.jqCode).toBe(0);
    expect(out.jqStdout).toBe('"bug"\n');
    const body = server.requests[0];
    const tool = body.tools.find((t: any) => t.function.name === "finalAnswer");
    expect(tool.function.parameters).toEqual(SCHEMA);
    expect(body.response_format).toBeUndefined();
    server.assertClean();
  });

  it("--output json has structured beside text, and the complete result keys", async () => {
    server = await startChatServer([reply.stream({ toolCalls: [finalCall({ label: "feature", confidence: 0.5 })], usage: { prompt_tokens: 10, completion_tokens: 5 } })]);
    const r = await run(["--output-schema", JSON.stringify(SCHEMA), "--output", "json", "Classify"]);
    expect(r.code, r.stderr).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json).toMatchObject({ stopReason: "terminated", structured: { label: "feature", confidence: 0.5 }, text: '{"label":"feature","confidence":0.5}', model: "test-model", finishReason: "tool_calls", costUsd: null, sessionId: null, exitCode: 0 });
    expect(r.end).toMatchObject({ stopReason: "terminated", structured: { label: "feature", confidence: 0.5 }, model: "test-model", finishReason: "tool_calls" });
    server.assertClean();
  });

  it("an invalid call goes back with the validation errors, and the fixed one is taken", async () => {
    server = await startChatServer([
      reply.stream({ toolCalls: [finalCall({ label: "crash", confidence: 2 })] }),
      reply.stream({ toolCalls: [finalCall({ label: "bug", confidence: 0.7 }, "call_g")] }),
    ]);
    const r = await run(["--output-schema", "schema.json", "Classify"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ label: "bug", confidence: 0.7 });
    const back = server.requests[1].messages.find((m: any) => m.role === "tool");
    expect(back.content).toContain("label");
    expect(back.content).toContain("confidence");
    expect(back.content).toMatch(/must be <= 1/);
    server.assertClean();
  });

  it("invalid until the retries run out: outputInvalid, exit 3, the last invalid answer in the result", async () => {
    const bad = (n: number) => reply.stream({ toolCalls: [finalCall({ label: `nope${n}`, confidence: 0.1 }, `call_${n}`)] });
    server = await startChatServer([bad(1), bad(2), bad(3)]);
    const r = await run(["--output-schema", "schema.json", "--output", "json", "Classify"]);
    expect(r.code, r.stderr).toBe(3);
    const json = JSON.parse(r.stdout);
    expect(json.stopReason).toBe("outputInvalid");
    expect(json.structured).toBeNull();
    expect(JSON.parse(json.text)).toEqual({ label: "nope3", confidence: 0.1 });
    expect(json.error).toMatch(/did not match the output schema after 2 retries/);
    expect(r.end).toMatchObject({ stopReason: "outputInvalid", structured: null });
    expect(server.requests).toHaveLength(3);
    server.assertClean();
  });

  it("text mode prints nothing on stdout when no answer validated", async () => {
    server = await startChatServer([reply.stream({ toolCalls: [finalCall({ label: "x", confidence: 0 })] })]);
    const r = await run(["-c", "zero.yaml", "Classify"]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.end.error).toMatch(/did not match the output schema: /);
  });

  it("prose instead of the tool is asked once more, not counted; prose again counts", async () => {
    server = await startChatServer([
      reply.stream({ content: "I think it is a bug." }),
      reply.stream({ content: "Definitely a bug." }),
      reply.stream({ toolCalls: [finalCall({ label: "bug", confidence: 0.8 })] }),
    ]);
    await writeFile(join(dir, "one.yaml"), `${SPEC}output: { schema: schema.json, retries: 1 }\n`);
    const r = await run(["-c", "one.yaml", "Classify"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ label: "bug", confidence: 0.8 });
    const nudge = server.requests[1].messages.at(-1);
    expect(nudge).toMatchObject({ role: "user" });
    expect(nudge.content).toMatch(/Call the finalAnswer tool/);
    server.assertClean();
  });

  it("prose every time: after the one free reminder, each counts, then outputInvalid", async () => {
    server = await startChatServer([reply.stream({ content: "bug" }), reply.stream({ content: "a bug" }), reply.stream({ content: "bug!" })]);
    await writeFile(join(dir, "one.yaml"), `${SPEC}output: { schema: schema.json, retries: 1 }\n`);
    const r = await run(["-c", "one.yaml", "--output", "json", "Classify"]);
    expect(r.code, r.stderr).toBe(3);
    const json = JSON.parse(r.stdout);
    expect(json).toMatchObject({ stopReason: "outputInvalid", text: "bug!", structured: null });
    expect(json.error).toMatch(/answered in text instead of calling finalAnswer/);
    expect(server.requests).toHaveLength(3);
  });

  it("a text answer that is valid JSON for the schema is taken as it is", async () => {
    server = await startChatServer([reply.stream({ content: '```json\n{"label":"question","confidence":0.3}\n```' })]);
    const r = await run(["--output-schema", "schema.json", "Classify"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('{"label":"question","confidence":0.3}\n');
    expect(r.end.stopReason).toBe("completed");
  });

  it("a text answer whose root value passes only by coercion is taken as the coerced value, not as it was written", async () => {
    // "5" for an integer schema: valid as 5 (scalars are coerced, as in tool arguments); stdout and structured say 5.
    server = await startChatServer([reply.stream({ content: '"5"' })]);
    const r = await run(["--output-schema", '{"type":"integer"}', "--output", "json", "Count"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ stopReason: "completed", structured: 5 });
    // 5 for a string enum of "5": "5".
    server = await startChatServer([reply.stream({ content: "5" })]);
    const s = await run(["--output-schema", '{"type":"string","enum":["5"]}', "Name"]);
    expect(s.code, s.stderr).toBe(0);
    expect(s.stdout).toBe('"5"\n');
    // A root error still reads as before (native mode, whose errors go back to the model): `(arguments): …`.
    server = await startChatServer([reply.stream({ content: '"five"' }), reply.stream({ content: '"six"' })]);
    const bad = await run(["--output-schema", '{"type":"integer"}', "Count"], join(dir, "native"));
    expect(bad.code).toBe(3);
    expect(bad.end.error).toContain("(arguments): must be integer");
    expect(server.requests[1].messages.at(-1).content).toContain("- (arguments): must be integer");
  });

  it("an answer of null that the schema allows is printed as null (exit 0), not as no answer", async () => {
    server = await startChatServer([reply.stream({ content: "null" })]);
    const r = await run(["--output-schema", '{"type":["integer","null"]}', "Count"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("null\n");
    // The final-answer tool's null, too.
    server = await startChatServer([reply.stream({ toolCalls: [finalCall({ value: null })] })]);
    const t = await run(["--output-schema", '{"type":["integer","null"]}', "Count"]);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toBe("null\n");
  });

  it("a schema that is not an object is wrapped as the tool's one property value", async () => {
    server = await startChatServer([reply.stream({ toolCalls: [finalCall({ value: ["a", "b"] })] })]);
    const r = await run(["--output-schema", '{"type":"array","items":{"type":"string"}}', "List"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('["a","b"]\n');
    const tool = server.requests[0].tools.find((t: any) => t.function.name === "finalAnswer");
    expect(tool.function.parameters).toMatchObject({ type: "object", required: ["value"] });
    server.assertClean();
  });
});

describe("stored sessions", () => {
  it("a run that ended outputInvalid is saved and can be resumed", async () => {
    server = await startChatServer([reply.stream({ toolCalls: [finalCall({ label: "x", confidence: 0 })] }), reply.stream({ toolCalls: [finalCall({ label: "bug", confidence: 0.6 }, "call_h")] })]);
    const store = join(dir, "store");
    const env = { TEST_BASE_URL: server.url, TEST_API_KEY: "sk-structured", YIEM_SESSION_DIR: store };
    const first = await runCli(["run", "-c", "zero.yaml", "--save", "--session-id", "triage-1", "Classify"], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(3);
    const again = await runCli(["run", "-c", "zero.yaml", "--resume", "triage-1", "Try again"], { cwd: dir, env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe('{"label":"bug","confidence":0.6}\n');
    server.assertClean();
  });
});

describe("output.mode native", () => {
  it("sends response_format json_schema (strict: the schema keeps the rules) and validates the answer", async () => {
    server = await startChatServer([reply.stream({ content: '{"label":"bug","confidence":1}' })]);
    const r = await run(["Classify"], join(dir, "native"));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('{"label":"bug","confidence":1}\n');
    expect(server.requests[0].response_format).toEqual({ type: "json_schema", json_schema: { name: "output", schema: SCHEMA, strict: true } });
    expect(server.requests[0].tools).toBeUndefined();
    server.assertClean();
  });

  it("strict is false when the schema breaks OpenAI's strict rules", async () => {
    server = await startChatServer([reply.stream({ content: '{"label":"bug"}' })]);
    const loose = { type: "object", properties: { label: { type: "string" }, note: { type: "string" } }, required: ["label"] };
    await writeFile(join(dir, "native", "loose.yaml"), `${SPEC}output: { schema: ${JSON.stringify(JSON.stringify(loose))}, mode: native }\n`);
    const r = await run(["-c", "loose.yaml", "Classify"], join(dir, "native"));
    expect(r.code, r.stderr).toBe(0);
    expect(server.requests[0].response_format.json_schema.strict).toBe(false);
    server.assertClean();
  });

  it("an invalid answer goes back with the errors; the retries run out → outputInvalid exit 3", async () => {
    server = await startChatServer([reply.stream({ content: '{"label":"bug"}' }), reply.stream({ content: "not json at all" })]);
    const r = await run(["--output", "json", "Classify"], join(dir, "native"));
    expect(r.code, r.stderr).toBe(3);
    const back = server.requests[1].messages.at(-1);
    expect(back.role).toBe("user");
    expect(back.content).toMatch(/confidence: is required/);
    const json = JSON.parse(r.stdout);
    expect(json).toMatchObject({ stopReason: "outputInvalid", text: "not json at all", structured: null });
    expect(json.error).toMatch(/not JSON/);
    server.assertClean();
  });

  it("a server that refuses response_format: its words in the error, and the hint to use mode tool", async () => {
    server = await startChatServer([reply.error(400, "This response_format type is unavailable now")]);
    const r = await run(["Classify"], join(dir, "native"));
    expect(r.code, r.stderr).toBe(1);
    expect(r.end.stopReason).toBe("error");
    expect(r.end.error).toContain("This response_format type is unavailable now");
    expect(r.end.error).toContain("output.mode: tool");
    expect(r.stdout).toBe("");
  });

  it("llama.cpp (grammar-constrained json_schema): the request it takes, the answer it gives", async () => {
    server = await startChatServer([reply.json({ content: '{ "label": "question", "confidence": 0.25 }' })], { profile: profiles.llamaCppJsonSchema() });
    const r = await run(["Classify", "--set", "model.stream=false"], join(dir, "native"));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('{"label":"question","confidence":0.25}\n');
    server.assertClean();
  });

  it("llama.cpp refuses a grammar with tools: its words, and the hint to use mode tool", async () => {
    server = await startChatServer([], { profile: profiles.llamaCppJsonSchema() });
    const r = await run(["-c", "with-tools.yaml", "Classify"], join(dir, "native"));
    expect(r.code, r.stderr).toBe(1);
    expect(r.end.error).toContain("Cannot use custom grammar constraints with tools.");
    expect(r.end.error).toContain("output.mode: tool");
    expect(server.requests[0].tools.length).toBeGreaterThan(0);
    server.assertClean({ refusals: 1 });
  });
});

describe("the schema is checked when the spec loads", () => {
  it("a schema ajv cannot use is exit 2 before any model call", async () => {
    server = await startChatServer([]);
    const r = await run(["Classify"], join(dir, "bad"));
    expect(r.code).toBe(2);
    expect(r.end.error).toMatch(/output\.schema: not a JSON Schema ajv can use/);
    expect(server.requests).toHaveLength(0);
  });

  it("--output-schema with a missing file or bad JSON names the flag, exit 2", async () => {
    const missing = await run(["--output-schema", "nope.json", "Classify"]);
    expect(missing.code).toBe(2);
    expect(missing.end.error).toMatch(/--output-schema: schema file "nope.json" not found/);
    const bad = await run(["--output-schema", "{not json", "Classify"]);
    expect(bad.code).toBe(2);
    expect(bad.end.error).toMatch(/--output-schema: the schema is not valid JSON/);
  });

  it("a loaded tool named finalAnswer clashes with tool mode: exit 2", async () => {
    await mkdir(join(dir, "clash", "tools"), { recursive: true });
    await writeFile(join(dir, "clash", "package.json"), JSON.stringify({ name: "clash", private: true }));
    await writeFile(join(dir, "clash", "agent.config.yaml"), `${SPEC}output: { schema: ../schema.json }\n`);
    await writeFile(join(dir, "clash", "tools", "final.ts"), `import { defineTool, toolResult } from "yiem";
export default defineTool({ name: "finalAnswer", label: "F", description: "mine", inputSchema: { type: "object", properties: {} }, execute: () => toolResult("x") });
`);
    const r = await run(["Classify"], join(dir, "clash"));
    expect(r.code).toBe(2);
    expect(r.end.error).toMatch(/a loaded tool has that name/);
  });
});

// ---- jq ----

async function jqPath(): Promise<string> {
  const found = await new Promise<string | null>((resolve) => execFile("sh", ["-c", "command -v jq"], (error, stdout) => resolve(error ? null : stdout.trim())));
  if (!found) throw new Error("jq is not installed: this test pipes yiem into jq (install it: apt-get install -y jq; .ci/run installs it when missing)");
  return found;
}

/** `yiem ARGS | jq FILTER` run by bash, as a script would: yiem's stdout is jq's stdin; both exit codes come back. */
function pipeIntoJq(args: string[], jq: string[], baseUrl: string): Promise<{ yiemCode: number; jqCode: number; jqStdout: string; stderr: string }> {
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  const line = `${[process.execPath, yiemBin, ...args].map(quote).join(" ")} | ${jq.map(quote).join(" ")}; echo "exit codes: \${PIPESTATUS[*]}" >&2`;
  return new Promise((resolve, reject) => {
    execFile("bash", ["-c", line], { cwd: dir, env: baseEnv({ TEST_BASE_URL: baseUrl, TEST_API_KEY: "sk-structured" }), timeout: 20_000 }, (error, stdout, stderr) => {
      if (error) return reject(error);
      const codes = /exit codes: (\d+) (\d+)/.exec(stderr);
      if (!codes) return reject(new Error(`no exit codes in: ${stderr}`));
      resolve({ yiemCode: Number(codes[1]), jqCode: Number(codes[2]), jqStdout: stdout, stderr });
    });
  });
}
