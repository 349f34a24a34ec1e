import { mkdtemp, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listToolFiles, loadTools, toolFileKind } from "../../src/tools/loader.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { defineTool, toolResult } from "../../src/tools/define.js";

const tool = (name: string, extra = "") => `import { defineTool, toolResult } from "yiem";
export default defineTool({
  name: ${JSON.stringify(name)},
  label: ${JSON.stringify(name)},
  description: "test tool",
  inputSchema: { type: "object", properties: {} },
  async execute() { return toolResult(${JSON.stringify(`ran ${name}`)}); },
  ${extra}
});
`;

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "yiem-loader-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function folder(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
  return dir;
}

describe("tool files", () => {
  it("classifies file names: module, command, or skipped", () => {
    expect(["a.ts", "a.mts", "a.js", "a.mjs"].map(toolFileKind)).toEqual(["module", "module", "module", "module"]);
    expect(["a.tool.yaml", "a.tool.yml", "a.tool.json"].map(toolFileKind)).toEqual(["command", "command", "command"]);
    expect(["_lib.ts", ".hidden.ts", "a.d.ts", "a.test.ts", "a.test.mjs", "readme.md", "a.json", ".yiem-tmp-x.ts-123"].map(toolFileKind))
      .toEqual([null, null, null, null, null, null, null, null]);
  });

  it("lists a folder alphabetically by code point", async () => {
    const dir = await folder("order", { "b.ts": "", "A.ts": "", "a.ts": "", "_skip.ts": "", "c.txt": "" });
    expect((await listToolFiles(dir)).map((f) => f.slice(dir.length + 1))).toEqual(["A.ts", "a.ts", "b.ts"]);
  });
});

describe("loadTools", () => {
  it("loads TS and JS tools from folders in order, alphabetically within each, importing yiem from outside the repo", async () => {
    const first = await folder("first", {
      "zeta.ts": tool("zeta"),
      "alpha.ts": tool("alpha"),
      "getter.mjs": `export function getTool() { return { name: "getter", label: "g", description: "d", inputSchema: { type: "object" }, execute: async () => ({ content: [{ type: "text", text: "g" }] }) }; }`,
    });
    const second = await folder("second", { "beta.mts": tool("beta") });
    const { registry, problems } = await loadTools([first, second]);
    expect(problems).toEqual([]);
    expect(registry.list().map((t) => t.name)).toEqual(["alpha", "getter", "zeta", "beta"]);
    const result = await registry.get("alpha")!.execute("id", {}, new AbortController().signal, () => {});
    expect(result.content).toEqual([{ type: "text", text: "ran alpha" }]);
    expect(registry.entry("beta")!.source).toEqual({ kind: "file", path: join(second, "beta.mts") });
  });

  it("reports a broken file, an invalid export and a missing export with path and reason, while the rest loads", async () => {
    const dir = await folder("broken", {
      "good.ts": tool("good"),
      "syntax.ts": "export default {{{",
      "throws.ts": 'throw new Error("kaboom at load");',
      "shape.ts": 'export default { name: "shape", label: "s", description: "d", inputSchema: { type: "string" }, execute() {} };',
      "nothing.ts": "export const x = 1;",
    });
    const { registry, problems } = await loadTools([dir]);
    expect(registry.list().map((t) => t.name)).toEqual(["good"]);
    const byFile = Object.fromEntries(problems.map((p) => [p.path.slice(dir.length + 1), p.reason]));
    expect(Object.keys(byFile).sort()).toEqual(["nothing.ts", "shape.ts", "syntax.ts", "throws.ts"]);
    expect(byFile["throws.ts"]).toContain("kaboom at load");
    expect(byFile["shape.ts"]).toContain('"inputSchema.type" must be "object"');
    expect(byFile["nothing.ts"]).toContain("getTool()");
    expect(byFile["syntax.ts"].length).toBeGreaterThan(0);
  });

  it("reports duplicate names naming both files; the first keeps the name", async () => {
    const a = await folder("dupA", { "one.ts": tool("same", 'description: "first",') });
    const b = await folder("dupB", { "two.ts": tool("same") });
    const { registry, problems } = await loadTools([a, b]);
    expect(registry.get("same")!.description).toBe("first");
    expect(problems).toHaveLength(1);
    expect(problems[0].reason).toContain(join(a, "one.ts"));
    expect(problems[0].reason).toContain(join(b, "two.ts"));
  });

  it("reports a missing folder as a problem", async () => {
    const { problems } = await loadTools([join(root, "does-not-exist")]);
    expect(problems[0].reason).toContain("cannot read tool folder");
  });

  it("follows a symlinked tool file", async () => {
    const target = await folder("linked-src", { "_real.ts": tool("linked") });
    const dir = await folder("linked", {});
    await symlink(join(target, "_real.ts"), join(dir, "linked.ts"));
    const { registry, problems } = await loadTools([dir]);
    expect(problems).toEqual([]);
    expect(registry.has("linked")).toBe(true);
  });
});

describe("ToolRegistry", () => {
  const t = (name: string) => defineTool({ name, label: name, description: "", inputSchema: { type: "object" }, execute: async () => toolResult("") });

  it("never replaces a builtin, and replaces others only when asked", () => {
    const registry = new ToolRegistry();
    registry.register(t("listTools"), { kind: "builtin" });
    registry.register(t("mine"), { kind: "file", path: "/x/mine.ts" });
    expect(() => registry.register(t("listTools"), { kind: "file" }, { replace: true })).toThrow(/built-in/);
    expect(() => registry.register(t("mine"), { kind: "file", path: "/y/mine.ts" })).toThrow(/duplicate tool name "mine": \/x\/mine.ts and \/y\/mine.ts/);
    registry.register(t("mine"), { kind: "file", path: "/y/mine.ts" }, { replace: true });
    expect(registry.entry("mine")!.source.path).toBe("/y/mine.ts");
  });

  it("refuses tools with an invalid shape or name", () => {
    const registry = new ToolRegistry();
    expect(() => registry.register({ ...t("ok"), name: "../evil" })).toThrow(/name/);
    expect(() => registry.register({ ...t("ok"), execute: undefined as never })).toThrow(/execute/);
  });
});
