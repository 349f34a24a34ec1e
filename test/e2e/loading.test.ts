/**
 * Seed fidelity in loading and the library API: schemas checked at load
 * (an invalid one is a load problem, remembered-valid ones cost no ajv on a warm start),
 * `loadTools("dir")`, `registerTool(tool)`, the built-in factories exported from "yiem", and the
 * listTools text.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as yiem from "../../src/index.js";
import { loadTools } from "../../src/tools/loader.js";
import { schemaCacheFile } from "../../src/tools/schema-check.js";
import { processCacheScope } from "../../src/cache-dir.js";
import { createScriptedProvider } from "../../src/provider/scripted.js";
import { repoRoot, yiemBin } from "../support/cli.js";
import { echoTool, textOf, toolMessages } from "../support/loop.js";

let dir: string;
let tools: string;
let cacheDir: string;
const savedCacheDir = process.env.YIEM_CACHE_DIR;

const toolFile = (name: string, schema: string) =>
  `export default { name: ${JSON.stringify(name)}, label: "L ${name}", description: "D ${name}", inputSchema: ${schema}, execute() { return "ran ${name}"; } };\n`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "yiem-fidelity-loading-"));
  tools = join(dir, "tools");
  cacheDir = join(dir, "cache");
  mkdirSync(tools);
  writeFileSync(join(tools, "a_good.mjs"), toolFile("good", '{ type: "object", properties: { n: { type: "integer", default: 1 } } }'));
  writeFileSync(join(tools, "b_badtype.mjs"), toolFile("badType", '{ type: "object", properties: { a: { type: "strin" } } }'));
  writeFileSync(join(tools, "c_badref.mjs"), toolFile("badRef", '{ type: "object", properties: { a: { $ref: "#/definitions/missing" } } }'));
  writeFileSync(
    join(tools, "d_cycle.mjs"),
    'const s = { type: "object", properties: {} }; s.properties.self = s;\n' + toolFile("cycle", "s"),
  );
  process.env.YIEM_CACHE_DIR = cacheDir;
});

afterAll(() => {
  if (savedCacheDir === undefined) delete process.env.YIEM_CACHE_DIR;
  else process.env.YIEM_CACHE_DIR = savedCacheDir;
  rmSync(dir, { recursive: true, force: true });
});

describe("tool schemas are checked when loading", () => {
  it("an invalid schema is a load problem naming the tool; the tool is not registered, the others are", async () => {
    const { registry, problems } = await loadTools([tools]);
    expect(registry.list().map((t) => t.name)).toEqual(["good"]);
    expect(problems.map((p) => p.path.split("/").pop())).toEqual(["b_badtype.mjs", "c_badref.mjs", "d_cycle.mjs"]);
    expect(problems[0].reason).toMatch(/^tool "badType": invalid inputSchema: schema\/properties\/a\/type must be/);
    expect(problems[1].reason).toMatch(/^tool "badRef": invalid inputSchema: .*can't resolve reference #\/definitions\/missing/);
    expect(problems[2].reason).toMatch(/^tool "cycle": invalid inputSchema: it is not plain JSON/);
    expect(registry.problems).toEqual(problems);
  });

  it("remembers valid schemas in the cache folder, never invalid ones", async () => {
    await loadTools(tools);
    const [signature, body] = readFileSync(schemaCacheFile(processCacheScope())!, "utf8").split("\n");
    const cache = JSON.parse(body) as { format: string; valid: string[] };
    expect(schemaCacheFile(processCacheScope())).toBe(join(cacheDir, "schemas", "valid.json"));
    expect(signature).toBe("-"); // a cache outside any project: owned, unsigned
    expect(cache.format).toBe("yiem-schemas-2");
    // The valid schemas by their JSON text; the invalid ones are never remembered.
    expect(cache.valid.length).toBeGreaterThanOrEqual(1);
    expect(cache.valid.every((json) => JSON.parse(json).type === "object")).toBe(true);
    expect(cache.valid.some((json) => json.includes("strin") || json.includes("#/definitions/missing"))).toBe(false);
  });

  it("CLI: `tools list` warns about the invalid schemas each time; a warm start loads no ajv", () => {
    // A cache inside a project (a signed one), its key in the user cache folder outside it.
    mkdirSync(join(dir, "proj", ".git"), { recursive: true });
    let cliCache = join(dir, "proj", "cli-cache");
    let userCache = join(dir, "user-cache");
    const list = () => {
      const trace = join(dir, `trace-${Math.random().toString(36).slice(2)}.txt`);
      writeFileSync(trace, "");
      const r = spawnSync(process.execPath, ["--import", join(repoRoot, "bench", "lib", "trace-modules.mjs"), yiemBin, "tools", "list", "--tool-dir", join(dir, "goodonly")], {
        // Not the caches' parent: a cache folder inside the working folder never holds the key.
        cwd: join(dir, "goodonly"),
        env: { ...process.env, YIEM_CACHE_DIR: cliCache, XDG_CACHE_HOME: userCache, YIEM_TRACE_MODULES: trace },
        encoding: "utf8",
      });
      const ajvLoaded = readFileSync(trace, "utf8").split("\n").some((l) => /node_modules[\\/]ajv[\\/]/.test(l));
      return { ...r, ajvLoaded };
    };
    mkdirSync(join(dir, "goodonly"), { recursive: true });
    writeFileSync(join(dir, "goodonly", "good.mjs"), toolFile("good", '{ type: "object", properties: { s: { type: "string", format: "email" } } }'));
    const cold = list();
    expect(cold.status).toBe(0);
    expect(cold.stdout).toMatch(/^good\t/m);
    expect(cold.ajvLoaded).toBe(true);
    const remembered = join(cliCache, "schemas", "valid.json");
    expect(existsSync(remembered)).toBe(true);
    const warm = list();
    expect(warm.stdout).toBe(cold.stdout);
    expect(warm.ajvLoaded).toBe(false);

    // Entries are signed with the per-user cache key: a cache copied from another user (another key) proves nothing.
    const copied = readFileSync(remembered, "utf8");
    expect(copied.split("\n")[0]).toMatch(/^[0-9a-f]{64}$/);
    cliCache = join(dir, "proj", "cli-cache-other");
    userCache = join(dir, "user-cache-other");
    mkdirSync(join(cliCache, "schemas"), { recursive: true, mode: 0o700 });
    writeFileSync(join(cliCache, "schemas", "valid.json"), copied);
    expect(list().ajvLoaded).toBe(true);

    writeFileSync(join(dir, "goodonly", "worse.mjs"), toolFile("worse", '{ type: "object", required: "s" }'));
    for (const run of [list(), list()]) {
      expect(run.status).toBe(0);
      expect(run.stdout).not.toMatch(/^worse\t/m);
      const warning = run.stderr.trim().split("\n").map((l) => JSON.parse(l));
      expect(warning).toEqual([expect.objectContaining({ type: "warning", message: expect.stringMatching(/^tool not loaded: tool "worse": invalid inputSchema: schema\/required must be array/) })]);
    }
  });
});

describe("the library API of the seed", () => {
  it("loadTools accepts one folder as a string", async () => {
    const one = await loadTools(tools);
    const many = await loadTools([tools]);
    expect(one.registry.list().map((t) => t.name)).toEqual(["good"]);
    expect(one.problems).toEqual(many.problems);
  });

  it("registerTool(tool) adds to the default registry, which runAgent uses when given none", async () => {
    const tool = echoTool("fidelityRegistered");
    const returned = yiem.registerTool(tool);
    expect(returned).toBe(yiem.defaultToolRegistry);
    expect(yiem.defaultToolRegistry.get("fidelityRegistered")).toBe(tool);
    const result = await yiem.runAgent({
      provider: createScriptedProvider([{ toolCalls: [{ id: "x", name: "fidelityRegistered", arguments: '{"text":"hi"}' }] }, { content: "done" }]),
      messages: [{ role: "user", content: "go" }],
    });
    expect(result.stopReason).toBe("completed");
    expect(textOf(toolMessages(result.messages)[0].content)).toBe("echo:hi");
    expect(() => yiem.registerTool(tool)).toThrow(/duplicate tool name "fidelityRegistered"/);
  });

  it("registerTool(registry, tool) still works and returns that registry", () => {
    const registry = new yiem.ToolRegistry();
    expect(yiem.registerTool(registry, echoTool("x"))).toBe(registry);
    expect(registry.get("x")?.name).toBe("x");
    expect(yiem.defaultToolRegistry.has("x")).toBe(false);
  });

  it('exports the writeTool and listTools factories from "yiem"', async () => {
    const registry = new yiem.ToolRegistry();
    const list = yiem.createListTools(registry);
    const write = yiem.createWriteTool({ registry, writeToolDir: join(dir, "written") });
    registry.register(list, { kind: "builtin" });
    registry.register(write, { kind: "builtin" });
    expect([list.name, write.name]).toEqual(["listTools", "writeTool"]);
    expect(yiem.createBuiltinTools(["listTools"], { registry, writeToolDir: null }).map((t) => t.name)).toEqual(["listTools"]);
    const written = await write.execute("w", { name: "fromLibrary", label: "From library", description: "Made by the test.", inputSchema: { type: "object" }, executeCode: 'return "made";' }, new AbortController().signal, () => {});
    expect(written.details).toMatchObject({ name: "fromLibrary", replaced: false });
    const text = textOf((await list.execute("l", {}, new AbortController().signal, () => {})).content);
    expect(text.split("\n")).toEqual([
      "Available tools:",
      expect.stringMatching(/^- listTools: List tools — Lists every tool/),
      expect.stringMatching(/^- writeTool: Write a tool — Writes a new TypeScript tool/),
      "- fromLibrary: From library — Made by the test.",
    ]);
  });

  it("listTools text: 'Available tools:' then '- name: label — description' lines, white space collapsed", () => {
    expect(yiem.formatToolTable([{ name: "multi", label: "Multi\nline", description: "first\n  second" }])).toBe(
      "Available tools:\n- multi: Multi line — first second",
    );
    expect(yiem.formatToolTable([])).toBe("Available tools: none.");
  });
});
