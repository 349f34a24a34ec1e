/** Command tools with real child processes: bash and Node tools, streaming, limits, kills, secrets. */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadCommandTool } from "../../src/tools/command-tool.js";
import { loadTools } from "../../src/tools/loader.js";
import { liveProcessGroups } from "../../src/tools/process.js";
import { expectGroupGone } from "../support/processes.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { runAgent } from "../../src/loop/run-agent.js";
import { createScriptedProvider } from "../../src/provider/scripted.js";
import type { AgentEvent } from "../../src/loop/types.js";
import type { PartialToolResult, Tool, ToolResult } from "../../src/tools/types.js";

/** test/, where the fixtures are. */
const HERE = join(dirname(fileURLToPath(import.meta.url)), "..");
const FIXTURES = join(HERE, "fixtures", "command-tools");
const fixture = (name: string) => join(FIXTURES, name);
let tmp: string;
const savedEnv = { ...process.env };

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "yiem-command-tool-"));
  process.env.YIEM_KILL_GRACE_MS = "200";
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
afterEach(() => {
  for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
  Object.assign(process.env, savedEnv, { YIEM_KILL_GRACE_MS: "200" });
});

/** A Node tool manifest (run with this very Node) in the temp folder, calling a fixture script. */
function nodeManifest(name: string, script: string, extra: Record<string, unknown> = {}): string {
  const file = join(tmp, `${name}.tool.json`);
  const manifest = {
    name, label: name, description: `runs ${script}`, inputSchema: { type: "object" },
    command: [process.execPath, fixture(`scripts/${script}`)], ...extra,
  };
  writeFileSync(file, JSON.stringify(manifest));
  return file;
}

async function call(tool: Tool, args: Record<string, unknown>, signal = new AbortController().signal) {
  const partials: string[] = [];
  const onPartial = (p: PartialToolResult) => partials.push(typeof p === "string" ? p : JSON.stringify(p));
  try {
    const result: ToolResult = await tool.execute("call_1", args, signal, onPartial);
    return { result, error: null as Error | null, partials };
  } catch (error) {
    return { result: null, error: error as Error, partials };
  }
}

const text = (result: ToolResult | null) => result?.content.map((p) => (p.type === "text" ? p.text : "")).join("") ?? "";

const pidFrom = (partials: string[], label: string) => Number(partials.find((l) => l.startsWith(`${label} `))?.split(" ")[1]);

async function expectNoSurvivors(partials: string[]) {
  const main = pidFrom(partials, "main");
  await expectGroupGone(main, pidFrom(partials, "grandchild"));
  expect(liveProcessGroups()).not.toContain(main);
}

describe("command tools: bash", () => {
  it("passes shell metacharacters, quotes and newlines verbatim on stdin and in YIEM_TOOL_ARGS", async () => {
    const tool = await loadCommandTool(fixture("echo.tool.yaml"));
    const args = { text: "a; rm -rf /tmp/nope $(whoami) `id` 'single' \"double\" \\ back\nnew line\ttab | & > < ${HOME} *" };
    const { result, error } = await call(tool, args);
    expect(error).toBeNull();
    const [stdinLine, envLine] = text(result).split("\n");
    expect(JSON.parse(stdinLine)).toEqual(args);
    expect(JSON.parse(envLine)).toEqual(args);
  });

  it("streams each stderr line as a partial result, in order (last line without a newline too)", async () => {
    const tool = await loadCommandTool(fixture("echo.tool.yaml"));
    const { partials } = await call(tool, { text: "x" });
    expect(partials.slice(-3)).toEqual(["line one", "line two", "line three"]);
  });

  it("keeps the manifest's name, label, schema and parallelToolExecute", async () => {
    const tool = await loadCommandTool(fixture("echo.tool.yaml"));
    expect(tool).toMatchObject({ name: "echoArgs", label: "Echo arguments", parallelToolExecute: false });
    expect(tool.inputSchema).toMatchObject({ type: "object", required: ["text"] });
  });

  it("turns a non-zero exit into an error with the exit code and the last 20 stderr lines", async () => {
    const tool = await loadCommandTool(fixture("fail.tool.yaml"));
    const { error, partials } = await call(tool, {});
    expect(error?.message).toContain("exited with code 7");
    expect(error?.message).toContain("err 30");
    expect(error?.message).toContain("err 11\n");
    expect(error?.message).not.toContain("err 10\n");
    expect(partials.slice(-30)).toEqual(Array.from({ length: 30 }, (_, i) => `err ${i + 1}`));
  });

  it("on timeout kills the whole group, even a main process and grandchild that ignore SIGTERM", async () => {
    const tool = await loadCommandTool(fixture("stubborn.tool.yaml"));
    expect(tool.timeoutMs).toBe(600);
    const { error, partials } = await call(tool, {});
    expect(error?.message).toContain("timed out after 600 ms");
    await expectNoSurvivors(partials);
  });

  it("on abort mid-run kills the whole group", async () => {
    const tool = await loadCommandTool(fixture("stubborn.tool.yaml"));
    const controller = new AbortController();
    const partials: string[] = [];
    const running = tool.execute("call_1", {}, controller.signal, (p) => {
      partials.push(String(p));
      if (String(p).startsWith("main ")) controller.abort(new Error("user abort"));
    });
    await expect(running).rejects.toThrow(/aborted and killed/);
    await expectNoSurvivors(partials);
  });
});

describe("command tools: Node", () => {
  it("with output: result, uses a JSON object with a content array on stdout as the result; cwd defaults to the manifest folder", async () => {
    const tool = await loadCommandTool(nodeManifest("report", "env.mjs", { output: "result" }));
    const { result, error } = await call(tool, { n: 1 });
    expect(error).toBeNull();
    expect(result?.content).toEqual([{ type: "text", text: "report" }]);
    const details = result?.details as { args: unknown; cwd: string; env: Record<string, string | null> };
    expect(details.args).toEqual({ n: 1 });
    expect(details.cwd).toBe(tmp);
    expect(details.env).toMatchObject({ YIEM_TOOL_NAME: "report", YIEM_TOOL_CALL_ID: "call_1" });
  });

  it("withholds secret-named variables unless the manifest lists them; interpolates ${VAR} in env", async () => {
    Object.assign(process.env, {
      MY_API_KEY: "sk-hidden-1", OPENAI_API_KEY: "sk-hidden-2", DB_PASSWORD: "hunter2",
      PASSED_TOKEN: "tok-passed", YIEM_TEST_PLAIN: "plain",
    });
    const tool = await loadCommandTool(nodeManifest("secrets", "env.mjs", {
      output: "result",
      env: { PASSED_TOKEN: "${PASSED_TOKEN}", GREETING: "hi ${YIEM_TEST_PLAIN} ${NOPE_UNSET:-there}", UNSET_ONLY: "${NOPE_UNSET}" },
    }));
    const { result } = await call(tool, {});
    expect((result?.details as { env: unknown }).env).toMatchObject({
      MY_API_KEY: null, OPENAI_API_KEY: null, DB_PASSWORD: null,
      PASSED_TOKEN: "tok-passed", YIEM_TEST_PLAIN: "plain", GREETING: "hi plain there", UNSET_ONLY: null,
    });
  });

  it("streams stderr lines spaced in time as partial results in order", async () => {
    const tool = await loadCommandTool(nodeManifest("stream", "stream.mjs"));
    const { result, partials } = await call(tool, {});
    expect(partials).toEqual(["step 1", "step 2", "step 3", "step 4", "step 5"]);
    expect(text(result)).toBe("done");
  });

  it("cuts stdout and stderr over 1 MiB with a marker", async () => {
    // 31 blocks of 1,024 lines of 100 bytes on each stream (~3 MiB).
    const script = fixture("../scripts/bulk-output.mjs");
    const tool = await loadCommandTool(nodeManifest("big", "bulk-output.mjs", { command: [process.execPath, script, "31", "1024"] }));
    const { result, partials } = await call(tool, {});
    const out = text(result);
    expect(out.length).toBeLessThan(1024 * 1024 + 200);
    expect(out).toMatch(/\[… output cut: \d+ more bytes not shown\]$/);
    expect((result?.details as { stdoutCutBytes: number }).stdoutCutBytes).toBe(31 * 1024 * 100 - 1024 * 1024);
    expect(partials.length).toBeLessThanOrEqual(1024 * 1024 / 100 + 2);
    expect(partials[partials.length - 1]).toMatch(/^\[… stderr cut: \d+ more bytes not shown\]$/);
  });

  it("reports a missing program clearly", async () => {
    const file = join(tmp, "missing.tool.yaml");
    writeFileSync(file, "name: missing\nlabel: m\ndescription: d\ninputSchema: {type: object}\ncommand: [./does-not-exist.sh]\n");
    const { error } = await call(await loadCommandTool(file), {});
    expect(error?.message).toMatch(/cannot run does-not-exist\.sh/);
  });
});

describe("when the yiem process itself ends mid-call", () => {
  /** Runs the stand-in parent process; resolves with the relayed lines once the tool runs. */
  async function startParent(mode: "exit" | "sigterm") {
    const manifest = join(tmp, `forever-${mode}.tool.json`);
    writeFileSync(manifest, JSON.stringify({
      name: "forever", label: "f", description: "f", inputSchema: { type: "object" }, command: ["bash", fixture("stubborn.sh")],
    }));
    const parent = spawn(process.execPath, [fixture("scripts/exit-mid-call.mjs"), join(HERE, "..", "src"), manifest, mode], { stdio: ["ignore", "pipe", "inherit"] });
    const lines: string[] = [];
    let buffered = "";
    parent.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      const parts = buffered.split("\n");
      buffered = parts.pop() ?? "";
      lines.push(...parts);
      if (mode === "sigterm" && parts.includes("ready")) parent.kill("SIGTERM");
    });
    const [code] = await once(parent, "exit");
    return { code, lines };
  }

  it("process exit kills the running tool's group (exit hook)", async () => {
    const { code, lines } = await startParent("exit");
    expect(code).toBe(0);
    await expectNoSurvivors(lines);
  });

  it("SIGTERM handled by calling killAllChildren() leaves no process of the group", async () => {
    const { code, lines } = await startParent("sigterm");
    expect(code).toBe(143);
    await expectNoSurvivors(lines);
  });
});

describe("command tool manifests", () => {
  it("rejects an unknown key, naming the file and the key", async () => {
    const file = fixture("bad-unknown-key.tool.yaml");
    await expect(loadCommandTool(file)).rejects.toThrow(file);
    await expect(loadCommandTool(file)).rejects.toThrow(/unknown key "colour"/);
  });

  it("rejects a missing command, naming the file and the key", async () => {
    const file = fixture("bad-no-command.tool.json");
    await expect(loadCommandTool(file)).rejects.toThrow(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: missing required key "command"`));
  });

  it("rejects wrong types: an empty command, non-string argv, non-string env values", async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ command: [] }, /"command" must be a non-empty array/],
      [{ command: ["bash", 3] }, /"command" must be a non-empty array of strings/],
      [{ command: ["bash"], env: { A: 1 } }, /"env\.A" must be a string/],
      [{ command: ["bash"], timeoutMs: "5s" }, /"timeoutMs"/],
    ];
    for (const [extra, message] of cases) {
      const file = join(tmp, "wrong.tool.json");
      writeFileSync(file, JSON.stringify({ name: "w", label: "w", description: "w", inputSchema: { type: "object" }, ...extra }));
      await expect(loadCommandTool(file)).rejects.toThrow(message);
    }
  });

  it("loadTools reports bad manifests as problems and still loads the good ones", async () => {
    const { registry, problems } = await loadTools([FIXTURES]);
    expect(registry.list().map((t) => t.name)).toEqual(["echoArgs", "failing", "stubborn"]);
    expect(registry.entry("echoArgs")?.source).toEqual({ kind: "command", path: fixture("echo.tool.yaml") });
    expect(problems.map((p) => p.path).sort()).toEqual([fixture("bad-no-command.tool.json"), fixture("bad-unknown-key.tool.yaml")]);
  });
});

describe("command tools in the loop", () => {
  it("emits each stderr line as a toolExecutionUpdate and the result as toolExecutionEnd", async () => {
    const registry = new ToolRegistry();
    registry.register(await loadCommandTool(nodeManifest("stream", "stream.mjs")), { kind: "command" });
    const provider = createScriptedProvider([{ toolCalls: [{ name: "stream", arguments: {} }] }, { content: "ok" }]);
    const events: AgentEvent[] = [];
    const run = await runAgent({ provider, registry, messages: [{ role: "user", content: "go" }], onEvent: (e) => events.push(e) });
    expect(run.stopReason).toBe("completed");
    const updates = events.flatMap((e) => (e.type === "toolExecutionUpdate" ? [e.partialResult.content[0]] : []));
    expect(updates).toEqual([1, 2, 3, 4, 5].map((i) => ({ type: "text", text: `step ${i}` })));
    const end = events.find((e) => e.type === "toolExecutionEnd");
    expect(end).toMatchObject({ isError: false, result: { content: [{ type: "text", text: "done" }] } });
  });
});
