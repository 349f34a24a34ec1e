/** `yiem tools …` end to end: the built binary as a child process, in temp folders with and without a spec. */
import { access, cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { constants } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { pathToFileURL } from "node:url";
import { loadTools } from "../../src/tools/loader.js";
import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";
import { parse as parseYaml } from "yaml";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, parseNdjson, repoRoot } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

const fixtures = join(repoRoot, "test", "fixtures", "tools-cli");
let root: string;
let project: string;

beforeAll(async () => {
  // The CLI runs from dist/: `npm test` builds first (run `npx tsc -p .` when running this file alone).
  await access(join(repoRoot, "dist", "cli", "commands", "tools.js"));
});
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "yiem-cli-tools-"));
  project = join(root, "project");
  await mkdir(join(project, "tools"), { recursive: true });
  await cp(join(fixtures, "good", "echo.ts"), join(project, "tools", "echo.ts"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const yiem = (args: string[], options: { stdin?: string; cwd?: string } = {}) =>
  runCli(["tools", ...args], { cwd: options.cwd ?? project, stdin: options.stdin, timeoutMs: 60_000 });

let validateEvent: ((value: unknown) => boolean) & { errors?: unknown };
beforeAll(async () => {
  const ajv = new Ajv({ allErrors: true, strict: false });
  (addFormatsModule as unknown as (a: Ajv) => void)(ajv);
  validateEvent = ajv.compile(JSON.parse(await readFile(join(repoRoot, "schema", "events.schema.json"), "utf8")));
});

/** Every stderr line is an event valid against schema/events.schema.json, seq from 1. */
function expectValidEvents(stderr: string) {
  const events = parseNdjson(stderr);
  for (const event of events) expect(validateEvent(event), JSON.stringify(validateEvent.errors)).toBe(true);
  events.forEach((e, i) => expect(e.seq).toBe(i + 1));
  return events;
}

describe("yiem tools list", { timeout: 120_000 }, () => {
  it("prints tab-separated lines when piped, with no spec file", async () => {
    const r = await yiem(["list"]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n").map((l) => l.split("\t"));
    expect(lines).toContainEqual(["echo", "Echo", "tools/echo.ts", "Echoes a text."]);
    expect(lines.map((l) => l[0])).toContain("listTools");
    expect(r.stderr).toBe("");
  });

  it("--json gives the definitions and the problems", async () => {
    const r = await yiem(["list", "--json"]);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.problems).toEqual([]);
    const echo = json.tools.find((t: { name: string }) => t.name === "echo");
    expect(echo).toMatchObject({ label: "Echo", parallelToolExecute: true, source: { kind: "file", path: join(project, "tools", "echo.ts") } });
    expect(echo.inputSchema.required).toEqual(["text"]);
  });

  it("still lists the good tools when some fail to load, with a warning event per problem", async () => {
    const r = await yiem(["list", "--tool-dir", join(fixtures, "broken")]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^fine\t/m);
    const warnings = expectValidEvents(r.stderr);
    // An invalid schema is a load problem too.
    expect(warnings.map((w) => [w.type, String(w.path).split("/").pop()])).toEqual([["warning", "badschema.ts"], ["warning", "syntax.ts"]]);
  });
});

describe("yiem tools new", { timeout: 120_000 }, () => {
  it("writes an example tool that list shows, call runs and check accepts", async () => {
    const made = await yiem(["new", "hello"]);
    expect(made.code).toBe(0);
    expect(made.stdout).toBe("tools/hello.ts\n");
    const list = await yiem(["list"]);
    expect(list.stdout).toMatch(/^hello\thello\ttools\/hello\.ts\t/m);
    const call = await yiem(["call", "hello", "--args", '{"text":"hi"}']);
    expect(call.code).toBe(0);
    expect(call.stdout).toBe('Received arguments: {"text":"hi"}\n');
    const check = await yiem(["check"]);
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(/^ok: 3 tools/m);
    expect((await readdir(join(project, "tools"))).sort()).toEqual(["echo.ts", "hello.ts"]);
  });

  it("refuses bad names with exit 2 and writes nothing", async () => {
    // The full list of bad names is covered in-process by test/tools/generator.test.ts.
    for (const name of ["../x", "a/b", "x.ts", "", "listTools"]) {
      const r = await yiem(["new", name]);
      expect(r.code, name).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/^yiem: .*(invalid tool name|built-in)/);
    }
    expect(await readdir(join(project, "tools"))).toEqual(["echo.ts"]);
    expect((await readdir(project)).sort()).toEqual(["tools"]);
  });

  it("round-trips hostile label and description text exactly through show", async () => {
    const label = 'He said "hi"; process.exit(1); // `tick` ${x} */';
    const description = "line one\nimport fs from 'node:fs';\u2028sep\u2029para ${process.exit(1)} \\ '";
    const made = await yiem(["new", "hostile", "--label", label, "--description", description]);
    expect(made.code).toBe(0);
    const show = await yiem(["show", "hostile"]);
    expect(show.code).toBe(0);
    const json = JSON.parse(show.stdout);
    expect(json.label).toBe(label);
    expect(json.description).toBe(description);
    expect((await yiem(["check"])).code).toBe(0);
  });

  it("takes --schema and --code from @files and --no-parallel", async () => {
    await writeFile(join(root, "schema.json"), JSON.stringify({ type: "object", properties: { a: { type: "integer" }, b: { type: "integer" } }, required: ["a", "b"] }));
    await writeFile(join(root, "code.ts"), "const sum: number = args.a + args.b;\nreturn toolResult(`sum ${sum}`, { details: { sum } });\n");
    const made = await yiem(["new", "add", "--schema", `@${join(root, "schema.json")}`, "--code", `@${join(root, "code.ts")}`, "--no-parallel", "--description", "Adds."]);
    expect(made.code).toBe(0);
    const show = JSON.parse((await yiem(["show", "add"])).stdout);
    expect(show).toMatchObject({ name: "add", label: "add", description: "Adds.", parallelToolExecute: false });
    const call = await yiem(["call", "add", "--args", '{"a": 2, "b": "3"}', "--output", "json"]);
    expect(call.code).toBe(0);
    expect(JSON.parse(call.stdout)).toEqual({ content: [{ type: "text", text: "sum 5" }], details: { sum: 5 }, isError: false });
  });

  it("takes inline --schema and --code", async () => {
    const made = await yiem(["new", "twice", "--schema", '{"type":"object","properties":{"s":{"type":"string"}}}', "--code", "return toolResult(String(args.s).repeat(2));"]);
    expect(made.code).toBe(0);
    const call = await yiem(["call", "twice", "--args", '{"s":"ab"}']);
    expect(call.stdout).toBe("abab\n");
  });

  it("refuses code that does not compile, naming the line of the code, and writes nothing", async () => {
    const r = await yiem(["new", "oops", "--code", "const a = 1;\nreturn toolResult(a +);"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/executeCode line 2, column \d+/);
    expect(await readdir(join(project, "tools"))).toEqual(["echo.ts"]);
  });

  it("refuses a schema that is not valid JSON Schema, or not JSON, and writes nothing", async () => {
    const bad = await yiem(["new", "oops", "--schema", '{"type":"object","properties":{"a":{"type":"strin"}}}']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/not a valid JSON Schema/);
    const notObject = await yiem(["new", "oops", "--schema", '{"type":"array"}']);
    expect(notObject.code).toBe(2);
    const notJson = await yiem(["new", "oops", "--schema", "{type: object}"]);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/--schema is not valid JSON/);
    expect(await readdir(join(project, "tools"))).toEqual(["echo.ts"]);
  });

  it("refuses an existing name unless --force, and --force replaces it", async () => {
    const taken = await yiem(["new", "echo"]);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toMatch(/already exists.*--force/);
    expect(await readFile(join(project, "tools", "echo.ts"), "utf8")).toContain("asked to fail");
    await yiem(["new", "hello"]);
    const forced = await yiem(["new", "hello", "--force", "--label", "Hello again"]);
    expect(forced.code).toBe(0);
    expect(JSON.parse((await yiem(["show", "hello"])).stdout).label).toBe("Hello again");
  });

  it("writes into --dir, else the spec's writeToolDir", async () => {
    await mkdir(join(project, "lib"));
    await writeFile(join(project, "agent.config.yaml"), "toolDirs: [tools, lib]\nwriteToolDir: lib\n");
    const r = await yiem(["new", "inLib"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("lib/inLib.ts\n");
    const other = await yiem(["new", "elsewhere", "--dir", "gen"]);
    expect(other.stdout).toBe("gen/elsewhere.ts\n");
    expect(await readdir(join(project, "gen"))).toEqual(["elsewhere.ts"]);
  });

  it("refuses a tools folder that is a symbolic link", async () => {
    const { symlink } = await import("node:fs/promises");
    await mkdir(join(root, "real"));
    await symlink(join(root, "real"), join(project, "linked"));
    const r = await yiem(["new", "x", "--dir", "linked"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/symbolic link/);
    expect(await readdir(join(root, "real"))).toEqual([]);
  });

  it("--command scaffolds a manifest and an executable script that runs", async () => {
    const r = await yiem(["new", "greet", "--command", "--description", "Says: it works"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("tools/greet.tool.yaml\ntools/greet.sh\n");
    const manifest = parseYaml(await readFile(join(project, "tools", "greet.tool.yaml"), "utf8"));
    expect(manifest).toMatchObject({ name: "greet", label: "greet", description: "Says: it works", command: ["bash", "greet.sh"] });
    expect((await stat(join(project, "tools", "greet.sh"))).mode & constants.S_IXUSR).toBeTruthy();
    const call = await yiem(["call", "greet", "--args", '{"text":"$(rm -rf /) `x`"}', "--events", "ndjson"]);
    expect(call.code).toBe(0);
    expect(call.stdout).toBe('Received arguments: {"text":"$(rm -rf /) `x`"}\n');
    const events = expectValidEvents(call.stderr);
    expect(events.map((e) => e.type)).toEqual(["agentStart", "toolExecutionStart", "toolExecutionUpdate", "toolExecutionEnd", "agentEnd"]);
    const again = await yiem(["new", "greet", "--command"]);
    expect(again.code).toBe(2);
  });
});

describe("yiem tools show", { timeout: 120_000 }, () => {
  it("prints the definition as JSON", async () => {
    const r = await yiem(["show", "echo"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      name: "echo",
      label: "Echo",
      description: "Echoes a text.",
      inputSchema: {
        type: "object",
        properties: { text: { type: "string" }, times: { type: "integer", minimum: 1, default: 1 } },
        required: ["text"],
        additionalProperties: false,
      },
      parallelToolExecute: true,
      source: { kind: "file", path: join(project, "tools", "echo.ts") },
    });
  });

  it("exits 2 for an unknown tool", async () => {
    const r = await yiem(["show", "nope"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown tool "nope"; available: listTools, echo/);
  });
});

describe("yiem tools call", { timeout: 120_000 }, () => {
  it("runs the tool: result text on stdout, events on stderr", async () => {
    const r = await yiem(["call", "echo", "--args", '{"text":"ab","times":"2"}', "--events", "ndjson"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("abab\n");
    const events = expectValidEvents(r.stderr);
    expect(events.map((e) => e.type)).toEqual(["agentStart", "toolExecutionStart", "toolExecutionUpdate", "toolExecutionEnd", "agentEnd"]);
    expect(events[1].args).toEqual({ text: "ab", times: 2 });
  });

  it("--output json prints {content, details, isError}", async () => {
    const r = await yiem(["call", "echo", "--args", '{"text":"x"}', "--output", "json", "--events", "none"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual({ content: [{ type: "text", text: "x" }], details: { times: 1 }, isError: false });
  });

  it("reads --args from a file and from stdin", async () => {
    await writeFile(join(root, "args.json"), '{"text":"file"}');
    expect((await yiem(["call", "echo", "--args", `@${join(root, "args.json")}`])).stdout).toBe("file\n");
    expect((await yiem(["call", "echo", "--args=-"], { stdin: '{"text":"stdin"}' })).stdout).toBe("stdin\n");
    expect((await yiem(["call", "echo", "--args", "-"], { stdin: '{"text":"spaced"}' })).stdout).toBe("spaced\n");
  });

  it("exits 1 when the result is an error", async () => {
    const r = await yiem(["call", "echo", "--args", '{"text":"fail"}', "--output", "json", "--events", "ndjson"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ isError: true, content: [{ type: "text", text: expect.stringMatching(/asked to fail/) }] });
    expect(expectValidEvents(r.stderr).at(-2)).toMatchObject({ type: "toolExecutionEnd", isError: true });
  });

  it("exits 2 on invalid arguments, with a toolCallRejected event and no execution", async () => {
    for (const args of ['{"times":2}', '{"text":"x","extra":1}', "not json", "[1]"]) {
      const r = await yiem(["call", "echo", "--args", args, "--events", "ndjson"]);
      expect(r.code, args).toBe(2);
      expect(r.stdout).toBe("");
      const events = expectValidEvents(r.stderr);
      expect(events.map((e) => e.type)).toEqual(["agentStart", "toolCallRejected", "agentEnd"]);
    }
    const plain = await yiem(["call", "echo", "--args", "{}", "--events", "none"]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toMatch(/text: is required/);
  });

  it("exits 2 for an unknown tool and for a missing --args file", async () => {
    const unknown = await yiem(["call", "nope", "--events", "ndjson"]);
    expect(unknown.code).toBe(2);
    expect(expectValidEvents(unknown.stderr)[1]).toMatchObject({ type: "toolCallRejected", reason: expect.stringMatching(/unknown tool "nope"/) });
    const missing = await yiem(["call", "echo", "--args", "@nowhere.json"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--args: file \\"nowhere\.json\\" not found \(\/.*nowhere\.json\)/);
  });
});

describe("yiem tools check", { timeout: 120_000 }, () => {
  it("exits 1 and names every broken file", async () => {
    const r = await yiem(["check", "--tool-dir", join(fixtures, "broken")]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/broken\/syntax\.ts: /);
    expect(r.stdout).toMatch(/broken\/badschema\.ts: tool "badschema": invalid inputSchema/);
    expect(r.stdout).not.toMatch(/fine\.ts/);
    expect(r.stdout).toMatch(/^2 problems \(2 tools loaded/m);
  });

  it("exits 0 with a summary when every tool is fine", async () => {
    const r = await yiem(["check"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("ok: 2 tools loaded from tools, no problems\n");
  });

  it("exits 2 on a broken spec", async () => {
    await writeFile(join(project, "agent.config.yaml"), "toolDirz: [tools]\n");
    const r = await yiem(["check"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/toolDirz/);
  });
});

describe("writeTool in one `yiem run`: the model writes a tool, then calls it", { timeout: 120_000 }, () => {
  let server: ChatServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  afterAll(async () => {
    await server?.close();
  });

  for (const mode of ["sequential", "parallel"] as const) {
    it(`works with toolExecution ${mode}`, async () => {
      await writeFile(
        join(project, "agent.config.yaml"),
        [
          "model: { name: test-model, baseURL: '${TEST_BASE_URL}', apiKeyEnv: TEST_API_KEY, maxRetries: 0 }",
          "toolDirs: [tools]",
          "builtinTools: [listTools, writeTool]",
          `toolExecution: ${mode}`,
          "",
        ].join("\n"),
      );
      const draft = {
        name: "triple",
        label: "Triple",
        description: "Triples a number.",
        inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
        executeCode: "return toolResult(`tripled: ${args.n * 3}`);",
      };
      server = await startChatServer([
        reply.stream({ toolCalls: [{ name: "listTools", arguments: "{}" }, { name: "writeTool", arguments: JSON.stringify(draft) }] }),
        reply.stream({ toolCalls: [{ name: "triple", arguments: '{"n":2}' }, { name: "echo", arguments: '{"text":"e"}' }] }),
        reply.stream({ content: "done: 6" }),
      ]);
      const r = await runCli(["run", "make a tripling tool and use it"], {
        cwd: project,
        env: { TEST_BASE_URL: server.url, TEST_API_KEY: "sk-test" },
        timeoutMs: 60_000,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe("done: 6\n");
      assertEventStream(r.events);
      server.assertClean();
      const offered = server.requests.map((q) => (q.tools ?? []).map((t: { function: { name: string } }) => t.function.name));
      expect(offered[0]).not.toContain("triple");
      expect(offered[1]).toContain("triple");
      const toolMessages = server.requests[2].messages.filter((m: { role: string }) => m.role === "tool");
      expect(toolMessages.slice(-2).map((m: { content: unknown }) => m.content)).toEqual(["tripled: 6", "e"]);
      const ends = r.events.filter((e) => e.type === "toolExecutionEnd");
      expect(ends.map((e) => [e.toolName, e.isError])).toEqual([
        ["listTools", false],
        ["writeTool", false],
        ["triple", false],
        ["echo", false],
      ]);
      // writeTool's default folder is generated-tools/ beside the spec, never the reviewed tools/.
      expect(await readdir(join(project, "tools"))).toEqual(["echo.ts"]);
      expect(await readdir(join(project, "generated-tools"))).toEqual(["triple.ts"]);
    });
  }
});

describe("killing a writer mid-write", { timeout: 120_000 }, () => {
  it("never leaves a partial tool file that the loader picks up", async () => {
    const dir = join(root, "killed");
    const script = join(root, "writer.mjs");
    const generator = pathToFileURL(join(repoRoot, "dist", "tools", "generator.js")).href;
    await writeFile(
      script,
      [
        `import { writeGeneratedTool } from ${JSON.stringify(generator)};`,
        "const [dir] = process.argv.slice(2);",
        "for (let i = 0; ; i++) {",
        "  await writeGeneratedTool({ name: 'big', label: 'Big', description: 'v' + i, inputSchema: { type: 'object' },",
        "    executeCode: '// ' + 'x'.repeat(150000) + '\\nreturn toolResult(\"v' + i + '\");' }, { dir, overwrite: true });",
        "  if (i === 0) process.stdout.write('ready\\n');",
        "}",
        "",
      ].join("\n"),
    );
    for (const delayMs of [0, 37, 111]) {
      const child = spawn(process.execPath, [script, dir], { stdio: ["ignore", "pipe", "inherit"] });
      await new Promise<void>((resolveReady, reject) => {
        child.stdout.on("data", () => resolveReady());
        child.on("exit", (code) => reject(new Error(`writer exited early with ${code}`)));
      });
      await new Promise((r) => setTimeout(r, delayMs));
      child.kill("SIGKILL");
      await new Promise((r) => child.once("close", r));
      const { registry, problems } = await loadTools([dir]);
      expect(problems).toEqual([]);
      expect(registry.list().map((t) => t.name)).toEqual(["big"]);
      expect((await readFile(join(dir, "big.ts"), "utf8")).endsWith("});\n")).toBe(true);
      // Leftover temp files, if any, are dot-files the loader skips.
      for (const entry of await readdir(dir)) expect(entry === "big.ts" || entry.startsWith(".yiem-tmp-")).toBe(true);
    }
  });
});
