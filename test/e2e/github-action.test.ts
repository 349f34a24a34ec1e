/**
 * action.yml, run as a GitHub runner runs a composite action's steps: each
 * `run:` with bash, the runner's variables and files, the step's `env:` with its expressions
 * substituted (test/support/github-action.ts), against the scripted chat server. The install step
 * runs with a stand-in `npm` (a real `npm ci` would replace this checkout's node_modules); the
 * run step runs the real yiem of this checkout.
 */
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { repoRoot } from "../support/cli.js";
import { workflowCommands } from "../support/github.js";
import { actionInputs, parseOutputs, readYaml, runnerFiles, runStep, type ActionFile, type ActionStep, type RunnerFiles } from "../support/github-action.js";

let action: ActionFile;
let workspace: string;
let server: ChatServer | undefined;
const SECRET = "sk-action-secret-value";

beforeAll(async () => {
  action = await readYaml<ActionFile>(join(repoRoot, "action.yml"));
  workspace = await mkdtemp(join(tmpdir(), "yiem-action-ws-"));
  await mkdir(join(workspace, "agents"), { recursive: true });
  await writeFile(join(workspace, "package.json"), "{}");
  await writeFile(join(workspace, "agents", "triage.yaml"), ["model:", "  name: test-model", "  baseURL: ${TEST_BASE_URL}", "  apiKeyEnv: TEST_API_KEY", "  maxRetries: 0", "builtinTools: []", ""].join("\n"));
  await writeFile(join(workspace, "label.schema.json"), JSON.stringify({ type: "object", properties: { label: { enum: ["bug", "feature"] } }, required: ["label"], additionalProperties: false }));
});
afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const step = (id: string): ActionStep => {
  const found = action.runs.steps.find((s) => s.id === id || s.name === id);
  if (!found) throw new Error(`no step ${id}`);
  return found;
};

interface ActionRun {
  code: number | null;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
  files: RunnerFiles;
}

/** The run step with `inputs`, the action at this checkout, the server's variables. */
async function runAction(inputs: Record<string, string>, env: Record<string, string> = {}): Promise<ActionRun> {
  const files = await runnerFiles(workspace);
  const github = { action_path: repoRoot, workspace };
  const r = await runStep(step("yiem"), { inputs: actionInputs(action, inputs), github }, files, { TEST_BASE_URL: server?.url ?? "http://127.0.0.1:9/v1", TEST_API_KEY: SECRET, ...env });
  const outputs = parseOutputs(await readFile(files.output, "utf8"));
  return { code: r.code, stderr: r.stderr, outputs, summary: await readFile(files.summary, "utf8"), files };
}

describe("action.yml, read as a runner reads it", () => {
  it("is a composite action whose scripts get inputs only through env:", () => {
    expect(action.runs.using).toBe("composite");
    for (const s of action.runs.steps) {
      expect(s.shell).toBe("bash");
      // An input inside run: text would be pasted into the script before bash sees it.
      expect(s.run ?? "").not.toContain("${{");
    }
  });

  it("every output is one the run step writes, and every input reaches a step", async () => {
    for (const [name, output] of Object.entries(action.outputs ?? {})) expect(output.value).toBe(`\${{ steps.yiem.outputs.${name} }}`);
    const used = JSON.stringify(action.runs.steps.map((s) => [s.env, s["working-directory"]]));
    for (const name of Object.keys(action.inputs ?? {})) expect(used).toContain(`inputs.${name} }}`);
  });
});

describe("the install step", { timeout: 60_000 }, () => {
  it("runs npm ci (and the build when npm ci did not) in the action's folder once, then reuses it", async () => {
    const actionPath = await mkdtemp(join(tmpdir(), "yiem-action-path-"));
    await copyFile(join(repoRoot, "package-lock.json"), join(actionPath, "package-lock.json"));
    const bin = join(actionPath, "fake-bin");
    await mkdir(bin);
    const log = join(actionPath, "npm.log");
    // A stand-in npm: logs its folder and arguments; `run build` makes the bundle.
    await writeFile(join(bin, "npm"), `#!/bin/sh\necho "$PWD $*" >> ${JSON.stringify(log)}\nif [ "$1" = run ] && [ "$2" = build ]; then mkdir -p dist/bundle && echo "// built" > dist/bundle/yiem.cjs; fi\n`);
    await chmod(join(bin, "npm"), 0o755);
    const files = await runnerFiles(workspace);
    const context = { inputs: actionInputs(action, {}), github: { action_path: actionPath, workspace } };
    const env = { PATH: `${bin}:${process.env.PATH}` };
    try {
      const first = await runStep(step("Install yiem"), context, files, env);
      expect(first.code, first.stderr).toBe(0);
      expect((await readFile(log, "utf8")).trim().split("\n")).toEqual([`${actionPath} ci --no-audit --no-fund`, `${actionPath} run build`]);
      const second = await runStep(step("Install yiem"), context, files, env);
      expect(second.code).toBe(0);
      expect(second.stdout).toContain("already installed");
      expect((await readFile(log, "utf8")).trim().split("\n")).toHaveLength(2);
      // A changed lockfile installs again (the bundle is there: npm ci's prepare script rebuilds it).
      await writeFile(join(actionPath, "package-lock.json"), "{}\n");
      expect((await runStep(step("Install yiem"), context, files, env)).code).toBe(0);
      expect((await readFile(log, "utf8")).trim().split("\n").slice(2)).toEqual([`${actionPath} ci --no-audit --no-fund`]);
    } finally {
      await rm(actionPath, { recursive: true, force: true });
      await rm(files.temp, { recursive: true, force: true });
    }
  });
});

describe("the run step: yiem run", { timeout: 60_000 }, () => {
  it("writes a multiline answer to GITHUB_OUTPUT whole, and a summary; shell text in inputs stays text", async () => {
    const answer = "Line one\nyiem_EOF\n::set-output name=x::y\nanswer<<EOF\n```\nlast";
    server = await startChatServer([reply.stream({ content: answer })]);
    const prompt = "-n $(touch pwned) `touch pwned2` ${HOME} \"quoted\"\nsecond line";
    const r = await runAction({ spec: "agents/triage.yaml", prompt });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(workspace, "pwned")) || existsSync(join(workspace, "pwned2"))).toBe(false);
    expect(server.requests[0].messages.at(-1).content).toBe(prompt);
    expect(r.outputs).toMatchObject({ answer, "exit-code": "0", "stop-reason": "completed", structured: "", "result-file": join(r.files.temp, "yiem-result.json") });
    expect(r.outputs["run-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.summary).toContain("### yiem run: ✅ completed (exit 0)");
    // The answer holds a ``` fence: the summary's fence is longer, so the answer cannot close it.
    expect(r.summary).toContain(`\`\`\`\`text\n${answer}\n\`\`\`\``);
    // --events github: only workflow commands on stderr, and no annotation for a success.
    expect(workflowCommands(r.stderr).map((c) => c.name)).toEqual(["debug", "debug"]);
  });

  it("with output-schema the answer output is the JSON value", async () => {
    server = await startChatServer([reply.stream({ toolCalls: [{ id: "call_f", name: "finalAnswer", arguments: JSON.stringify({ label: "bug" }) }] })]);
    const r = await runAction({ spec: "agents/triage.yaml", prompt: "Classify: it crashes", "output-schema": "label.schema.json" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.outputs.answer).toBe('{"label":"bug"}');
    expect(r.outputs.structured).toBe('{"label":"bug"}');
    expect(r.summary).toContain('```json\n{"label":"bug"}\n```');
  });

  it("args lines pass flags through as they are, and output names the result file", async () => {
    server = await startChatServer([reply.stream({ toolCalls: [{ id: "c1", name: "nosuch", arguments: "{}" }] })]);
    const out = join(workspace, "result.json");
    const r = await runAction({ spec: "agents/triage.yaml", prompt: "go", args: "--max-turns\n1\n", output: out });
    expect(r.code).toBe(3);
    expect(JSON.parse(await readFile(out, "utf8"))).toMatchObject({ stopReason: "maxTurns", exitCode: 3 });
    expect(r.outputs).toMatchObject({ "exit-code": "3", "stop-reason": "maxTurns", "result-file": out });
    expect(r.summary).toContain("### yiem run: ❌ maxTurns (exit 3)");
    expect(workflowCommands(r.stderr).filter((c) => c.name === "error").map((c) => c.properties)).toEqual([{ title: "yiem failed: maxTurns", file: "agents/triage.yaml" }]);
  });

  it("a failed run fails the step with yiem's code, an ::error:: annotation, outputs and a summary, the key never shown", async () => {
    server = await startChatServer([reply.error(500, `upstream refused ${SECRET}`)]);
    const r = await runAction({ spec: "agents/triage.yaml", prompt: "hi" });
    expect(r.code).toBe(1);
    expect(r.outputs).toMatchObject({ "exit-code": "1", "stop-reason": "error", answer: "" });
    expect(r.summary).toContain("### yiem run: ❌ error (exit 1)");
    expect(r.summary).toContain("upstream refused ***");
    expect(`${r.stderr}${r.summary}${await readFile(r.files.output, "utf8")}`).not.toContain(SECRET);
    expect(workflowCommands(r.stderr).filter((c) => c.name === "error")).toHaveLength(1);
  });

  it("an empty prompt (and no input file) is exit 2 with an ::error::, before yiem runs", async () => {
    const r = await runAction({ spec: "agents/triage.yaml" });
    expect(r.code).toBe(2);
    expect(workflowCommands(r.stderr)).toEqual([{ name: "error", properties: { title: "yiem action" }, data: expect.stringContaining("the prompt input is empty") }]);
    expect(r.outputs).toMatchObject({ "exit-code": "2", answer: "" });
    expect(r.summary).toContain("### yiem run: no result (exit 2)");
  });
});

describe("the run step: yiem batch", { timeout: 120_000 }, () => {
  it("runs the input file's items (one shard), counts them in outputs, and lists the failed ones in the summary, escaped", async () => {
    server = await startChatServer((request) => {
      const prompt = String(request.body.messages.at(-1)?.content);
      return prompt.startsWith("fail") ? reply.error(400, "refused\n| injected | row |") : reply.stream({ content: `answer to ${prompt}` });
    });
    const ids = ["a-1", "b|<b>2</b>", "c-3"];
    await writeFile(join(workspace, "items.jsonl"), ids.map((id, i) => JSON.stringify({ id, prompt: i === 1 ? "fail me" : `item ${i}` })).join("\n") + "\n");
    const r = await runAction({ spec: "agents/triage.yaml", input: "items.jsonl", shard: "1/1" });
    expect(r.code).toBe(1);
    const results = join(r.files.temp, "yiem-results.jsonl");
    expect(r.outputs).toMatchObject({ "exit-code": "1", total: "3", ok: "2", failed: "1", "result-file": results });
    expect((await readFile(results, "utf8")).trim().split("\n")).toHaveLength(3);
    expect(r.summary).toContain("### yiem batch: ❌ 2 of 3 ok (exit 1)");
    expect(r.summary).toContain("| b\\|&lt;b&gt;2&lt;/b&gt; | error | error | ");
    expect(r.summary).not.toContain("| injected |");
    const commands = workflowCommands(r.stderr).filter((c) => c.name !== "debug");
    expect(commands.map((c) => c.name)).toEqual(["notice", "error", "error"]);
    expect(commands[0].data).toContain("shard 1/1");
  });
});
