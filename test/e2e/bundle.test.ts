/**
 * The bundled CLI (dist/bundle/, scripts/bundle.mjs) and the library entry share one instance of
 * every module: a tool file's `import … from "yiem"` (served by yiem's module loader), the package
 * entry a tool's own code reaches through Node (`require("yiem")` from the tool's folder, as in an
 * installed project), and the CLI running the tool are one copy of the registry, the tool kit and
 * the loop. The library entry exports exactly what src/index.ts exports. `--debug` stack traces
 * point at src/ through the bundle's source maps.
 */
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as library from "../../src/index.js";
import { repoRoot, runCli } from "../support/cli.js";

let root: string;
let project: string;
let cacheDir: string;

const PROBE_TOOL = `import { defineTool, toolResult, ToolRegistry, defaultToolRegistry, runAgent } from "yiem";
import * as kit from "yiem";
import { yiem as native } from "uses-yiem";

const probe = defineTool({
  name: "probe",
  label: "Probe",
  description: "Compares the yiem this file imports with the one a package beside it imports through Node.",
  inputSchema: { type: "object" },
  async execute() {
    const registry = new native.ToolRegistry();
    return toolResult(JSON.stringify({
      defineTool: native.defineTool === defineTool,
      toolResult: native.toolResult === kit.toolResult,
      ToolRegistry: native.ToolRegistry === ToolRegistry,
      instanceOf: registry instanceof ToolRegistry,
      defaultToolRegistry: native.defaultToolRegistry === defaultToolRegistry,
      runAgent: native.runAgent === runAgent,
    }));
  },
});
export default probe;
`;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "yiem-bundle-"));
  project = join(root, "project");
  cacheDir = join(root, "cache");
  await mkdir(join(project, "tools"), { recursive: true });
  await mkdir(join(project, "node_modules"), { recursive: true });
  // An installed yiem (node_modules/yiem is this package), and a package of the project that
  // imports it the ordinary way: Node resolves `yiem` to the package entry, dist/index.js.
  await symlink(repoRoot, join(project, "node_modules", "yiem"), "dir");
  const usesYiem = join(project, "node_modules", "uses-yiem");
  await mkdir(usesYiem);
  await writeFile(join(usesYiem, "package.json"), JSON.stringify({ name: "uses-yiem", version: "1.0.0", type: "module", exports: "./index.js" }));
  await writeFile(join(usesYiem, "index.js"), 'import * as yiem from "yiem";\nexport { yiem };\n');
  await writeFile(join(project, "tools", "probe.ts"), PROBE_TOOL);
  await writeFile(join(project, "agent.config.yaml"), "name: probe\nmodel: gpt-4o-mini\ntoolDirs: [tools]\nbuiltinTools: []\n");
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe("one instance of the library in the CLI process", () => {
  it("a tool file's `yiem`, the package entry a package of the project imports, and the CLI's modules are the same objects", async () => {
    const r = await runCli(["tools", "call", "probe", "--events", "none"], { cwd: project, env: { YIEM_CACHE_DIR: cacheDir } });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      defineTool: true,
      toolResult: true,
      ToolRegistry: true,
      instanceOf: true,
      defaultToolRegistry: true,
      runAgent: true,
    });
  });

  it("the package entry (dist/index.js) exports exactly what src/index.ts exports", () => {
    const script = 'const lib = await import("yiem"); process.stdout.write(JSON.stringify(Object.keys(lib).sort()));';
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: project, encoding: "utf8" });
    expect(child.stderr).toBe("");
    expect(JSON.parse(child.stdout)).toEqual(Object.keys(library).sort());
  });
});

describe("source maps", () => {
  it("--debug stack traces name the src/ files; without --debug there is no stack", async () => {
    const dir = join(root, "bad-spec");
    await mkdir(dir);
    await writeFile(join(dir, "agent.config.yaml"), "model: ${NOT_SET_FOR_THE_BUNDLE_TEST}\n");
    const debug = await runCli(["config", "--debug"], { cwd: dir });
    expect(debug.code).toBe(2);
    expect(debug.stderr).toMatch(/\n\s+at .*[\\/]src[\\/]config[\\/]\w+\.ts:\d+:\d+/);
    expect(debug.stderr).not.toMatch(/dist[\\/]bundle/);
    const plain = await runCli(["config"], { cwd: dir });
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain("NOT_SET_FOR_THE_BUNDLE_TEST");
    expect(plain.stderr).not.toMatch(/\n\s+at /);
  });
});
