/** yiem's own module loader (src/tools/modules): resolution, interop, top-level await, caching. */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { importModule } from "../../../src/tools/modules/index.js";
import { loadToolFile } from "../../../src/tools/loader.js";
import { TOOL_KIT_EXPORTS } from "../../../src/tools/modules/interop.js";
import * as library from "../../../src/index.js";
import { repoRoot } from "../../support/cli.js";
import { processCacheScope } from "../../../src/cache-dir.js";

let root: string;
let cacheDir: string;
const savedCacheDir = process.env.YIEM_CACHE_DIR;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "yiem-modules-"));
  cacheDir = join(root, ".cache");
  process.env.YIEM_CACHE_DIR = cacheDir;
});
afterAll(async () => {
  if (savedCacheDir === undefined) delete process.env.YIEM_CACHE_DIR;
  else process.env.YIEM_CACHE_DIR = savedCacheDir;
  await rm(root, { recursive: true, force: true });
});

/** Writes `files` (relative path → text) under a new folder `name`; returns the folder. */
async function folder(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await writeFile(join(dir, file), text);
  }
  return dir;
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe("resolution", () => {
  it("imports relative TS files: exact, .js → .ts, no extension, folder index, and JSON", async () => {
    const dir = await folder("relative", {
      "main.ts": [
        'import { twice } from "./lib/math.js";',
        'import { name } from "./lib";',
        'import data from "./data.json";',
        'import { exact } from "./exact.mts";',
        "export const result: string = `${twice(21)} ${name} ${data.answer} ${exact}`;",
      ].join("\n"),
      "lib/math.ts": "export function twice(n: number): number { return n * 2; }",
      "lib/index.ts": 'export const name: string = "index";',
      "data.json": '{ "answer": 7 }',
      "exact.mts": 'export const exact = "mts";',
    });
    expect((await importModule(join(dir, "main.ts"))).result).toBe("42 index 7 mts");
  });

  it("names the missing file and the importer when a relative import is not found", async () => {
    const dir = await folder("missing", { "main.ts": 'import "./nope.js";' });
    const error = await rejection(importModule(join(dir, "main.ts")));
    expect(error.message).toContain("Cannot find module './nope.js'");
    expect(error.message).toContain(join(dir, "main.ts"));
  });

  it("resolves a symlinked file's relative imports from its real folder; import.meta keeps the link's path", async () => {
    const real = await folder("link-target", { "_tool.ts": 'export { help } from "./_helper";\nexport const file = import.meta.filename;', "_helper.ts": "export const help = 'real folder';" });
    const dir = await folder("link", {});
    await symlink(join(real, "_tool.ts"), join(dir, "tool.ts"));
    expect(await importModule(join(dir, "tool.ts"))).toMatchObject({ help: "real folder", file: join(dir, "tool.ts") });
  });

  it("resolves packages and node: built-ins from the tool's own folder (its node_modules)", async () => {
    const dir = await folder("packages", {
      "node_modules/cjs-pkg/package.json": '{ "name": "cjs-pkg", "main": "main.js" }',
      "node_modules/cjs-pkg/main.js": 'exports.kind = "cjs"; exports.where = __dirname;',
      "node_modules/esm-pkg/package.json": '{ "name": "esm-pkg", "type": "module", "exports": "./index.js" }',
      "node_modules/esm-pkg/index.js": 'export default "esm default"; export const named = "esm named";',
      "tool.ts": [
        'import { kind, where } from "cjs-pkg";',
        'import esmDefault, { named } from "esm-pkg";',
        'import { basename } from "node:path";',
        'import * as fs from "fs";',
        "export const values = [kind, basename(where), esmDefault, named, typeof fs.readFileSync];",
      ].join("\n"),
    });
    expect((await importModule(join(dir, "tool.ts"))).values).toEqual(["cjs", "cjs-pkg", "esm default", "esm named", "function"]);
  });

  it("falls back to yiem's own dependencies for a package the tool's folder lacks, and names the missing one", async () => {
    const dir = await folder("fallback", {
      "own/node_modules/city-timezones/package.json": '{ "name": "city-timezones", "main": "own.js" }',
      "own/node_modules/city-timezones/own.js": 'exports.lookupViaCity = () => ["the tool\'s own copy"];',
      "own/tool.ts": 'import { lookupViaCity } from "city-timezones";\nexport const first = lookupViaCity("x")[0];',
      "global.ts": [
        'import cityTimezones from "city-timezones";',
        'export const zone = cityTimezones.lookupViaCity("Tokyo")[0]?.timezone;',
        'export const resolved = import.meta.resolve("city-timezones");',
        'export async function later() { return (await import("city-timezones")).default.lookupViaCity("Paris")[0]?.timezone; }',
      ].join("\n"),
      "missing.ts": 'import "no-such-package-anywhere";\nexport const x = 1;',
    });
    expect((await importModule(join(dir, "own", "tool.ts"))).first).toBe("the tool's own copy");
    const global = await importModule(join(dir, "global.ts"));
    expect(global.zone).toBe("Asia/Tokyo");
    expect(String(global.resolved)).toContain("/node_modules/city-timezones/");
    expect(await (global.later as () => Promise<string>)()).toBe("Europe/Paris");
    const error = await rejection(importModule(join(dir, "missing.ts")));
    expect(error.message).toContain("no-such-package-anywhere");
    expect(error.message).toContain(join(dir, "missing.ts"));
  });

  it("hands `yiem` to every module as this package's library, loaded once", async () => {
    const dir = await folder("yiem", {
      "a.ts": 'import * as yiem from "yiem";\nimport { defineTool } from "yiem";\nexport { yiem, defineTool };',
      "b.mjs": 'import * as yiem from "yiem";\nexport { yiem };\nexport const dynamic = await import("yiem");',
    });
    const a = await importModule(join(dir, "a.ts"));
    const b = await importModule(join(dir, "b.mjs"));
    expect(typeof a.defineTool).toBe("function");
    expect(a.yiem).toBe(b.yiem);
    expect((b.dynamic as Record<string, unknown>).defineTool).toBe(a.defineTool);
  });

  it("serves the tool kit of `yiem` at once and the rest of the library on first use", async () => {
    const dir = await folder("yiem-lazy", {
      "t.ts": [
        'import { defineTool, runAgent, ToolRegistry } from "yiem";',
        'import * as all from "yiem";',
        "export const kinds = [typeof defineTool, typeof runAgent, typeof ToolRegistry];",
        "export const keys = Object.keys(all);",
        "export const same = all.defineTool === defineTool && (await import(\"yiem\")).runAgent === runAgent;",
      ].join("\n"),
    });
    // From source (this process) the library is imported whole; from the build (the CLI) it is the
    // lazy view: both must give the same answers.
    const distLoader = pathToFileURL(join(repoRoot, "dist", "tools", "modules", "index.js")).href;
    const script = `const { importModule } = await import(${JSON.stringify(distLoader)});
const t = await importModule(${JSON.stringify(join(dir, "t.ts"))});
process.stdout.write(JSON.stringify({ kinds: t.kinds, keys: t.keys, same: t.same }));`;
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", env: { ...process.env, YIEM_CACHE_DIR: cacheDir } });
    expect(child.stderr).toBe("");
    for (const t of [await importModule(join(dir, "t.ts")), JSON.parse(child.stdout) as Record<string, unknown>]) {
      expect(t.kinds).toEqual(["function", "function", "function"]);
      expect(t.keys).toEqual(expect.arrayContaining(["defineTool", "toolResult", "textContent", "runAgent", "loadTools", "ToolRegistry"]));
      expect(t.same).toBe(true);
    }
  });

  it("names only real library exports as the tool kit", () => {
    for (const name of TOOL_KIT_EXPORTS) expect(library[name as keyof typeof library], name).toBeDefined();
  });
});

describe("module formats", () => {
  it("runs CommonJS .js and .cjs untransformed, with require of TS and `yiem`", async () => {
    const dir = await folder("cjs", {
      "tool.js": [
        'const { defineTool } = require("yiem");',
        'const helper = require("./helper.cjs");',
        'const typed = require("./typed");',
        "module.exports = { value: helper.x + typed.y, file: __filename, hasDefine: typeof defineTool };",
      ].join("\n"),
      "helper.cjs": "exports.x = 40;",
      "typed.ts": "export const y: number = 2;",
    });
    const mod = await importModule(join(dir, "tool.js"));
    expect(mod.value).toBe(42);
    expect(mod.file).toBe(join(dir, "tool.js"));
    expect(mod.hasDefine).toBe("function");
    expect((mod.default as Record<string, unknown>).value).toBe(42);
  });

  it("gives the original file's import.meta values", async () => {
    const dir = await folder("meta", {
      "sub/tool.ts": [
        "export const url = import.meta.url;",
        "export const filename = import.meta.filename;",
        "export const dirname = import.meta.dirname;",
        'export const sibling = import.meta.resolve("./other");',
        'export const builtin = import.meta.resolve("node:fs");',
        "export const spaced = import . meta . url;",
      ].join("\n"),
      "sub/other.ts": "export {};",
    });
    const file = join(dir, "sub", "tool.ts");
    const mod = await importModule(file);
    expect(mod).toMatchObject({
      url: pathToFileURL(file).href,
      filename: file,
      dirname: join(dir, "sub"),
      sibling: pathToFileURL(join(dir, "sub", "other.ts")).href,
      builtin: "node:fs",
      spaced: pathToFileURL(file).href,
    });
  });

  it("never rewrites import words inside strings, comments, property names or types", async () => {
    const dir = await folder("words", {
      "tool.ts": [
        'type Other = typeof import("./other");',
        "const obj = { import(x: number) { return x + 1; } };",
        "// import.meta.url and import('./nope') in a comment",
        "export const text = \"import.meta import('./nope')\" + `import(${obj.import(1)})`;",
        'export const kind: Other["kind"] = "other";',
      ].join("\n"),
      "other.ts": 'export const kind = "other" as const;',
    });
    expect(await importModule(join(dir, "tool.ts"))).toMatchObject({ text: "import.meta import('./nope')import(2)", kind: "other" });
  });
});

describe("top-level await and dynamic import", () => {
  it("supports top-level await in the loaded file itself", async () => {
    const dir = await folder("tla", {
      "tool.ts": "const value: number = await new Promise((r) => setTimeout(() => r(5), 5));\nexport default value * 2;",
    });
    expect((await importModule(join(dir, "tool.ts"))).default).toBe(10);
  });

  it("refuses a static import of a module that uses top-level await, naming both files", async () => {
    const dir = await folder("tla-dep", {
      "tool.ts": 'import { late } from "./slow";\nexport const value = late;',
      "slow.ts": "export const late = await Promise.resolve(1);",
    });
    const error = await rejection(importModule(join(dir, "tool.ts")));
    expect(error.message).toContain(join(dir, "slow.ts"));
    expect(error.message).toContain(join(dir, "tool.ts"));
    expect(error.message).toMatch(/top-level await.*await import\("\.\/slow"\)/);
  });

  it("loads relative and package modules with dynamic import(), including one with top-level await", async () => {
    const dir = await folder("dynamic", {
      "node_modules/dyn-pkg/index.js": "module.exports = { pkg: true };",
      "tool.ts": [
        "export async function load(name: string) {",
        "  const slow = await import(`./${name}`);",
        '  const pkg = await import("dyn-pkg");',
        "  return [slow.late, pkg.default.pkg, pkg.pkg];",
        "}",
      ].join("\n"),
      "slow.ts": "export const late = await Promise.resolve('awaited');",
    });
    const mod = await importModule(join(dir, "tool.ts"));
    expect(await (mod.load as (n: string) => Promise<unknown>)("slow.ts")).toEqual(["awaited", true, true]);
  });
});

describe("evaluation once per content", () => {
  it("evaluates a module shared by several tools once; a cycle sees live bindings", async () => {
    const dir = await folder("shared", {
      "_shared.ts": "(globalThis as any).__yiemSharedCount = ((globalThis as any).__yiemSharedCount ?? 0) + 1;\nexport const token = {};",
      "one.ts": 'import { token } from "./_shared";\nexport { token };',
      "two.ts": 'import { token } from "./_shared.js";\nimport { pong } from "./cycle-b";\nexport { token };\nexport const ping = () => "ping";\nexport const answer = pong();',
      "cycle-b.ts": 'import { ping } from "./two";\nexport function pong() { return typeof ping; }',
    });
    const [one, two] = await Promise.all([importModule(join(dir, "one.ts")), importModule(join(dir, "two.ts"))]);
    expect(one.token).toBe(two.token);
    expect((globalThis as Record<string, unknown>).__yiemSharedCount).toBe(1);
    expect(two.answer).toBe("function");
  });

  it("reuses an unchanged file and evaluates a changed one fresh", async () => {
    const dir = await folder("changing", { "tool.ts": "export const stamp = { version: 1 };" });
    const file = join(dir, "tool.ts");
    const first = await importModule(file);
    expect((await importModule(file)).stamp).toBe(first.stamp);
    await writeFile(file, "export const stamp = { version: 2 };");
    expect((await importModule(file)).stamp).toEqual({ version: 2 });
  });

  it("writes the transformed code to the folder's pack in the cache and uses it in a new process", async () => {
    const dir = await folder("cached", { "tool.ts": 'export const origin: string = "transformed";', "other.ts": "export const n: number = 1;" });
    const file = join(dir, "tool.ts");
    const before = new Set(await readdir(join(cacheDir, "modules")).catch(() => []));
    expect((await importModule(file)).origin).toBe("transformed");
    expect((await importModule(join(dir, "other.ts"))).n).toBe(1);
    await new Promise((resolve) => setImmediate(resolve)); // the pack is written after the burst of loads
    const added = (await readdir(join(cacheDir, "modules"))).filter((name) => !before.has(name));
    expect(added).toHaveLength(1);
    expect(added[0]).toMatch(/^[0-9a-f]{16}\.pack$/);
    const pack = join(cacheDir, "modules", added[0]);
    const text = await readFile(pack, "utf8");
    expect(text).toContain('const origin = "transformed"');
    expect(text).toContain("const n = 1");
    expect(text).not.toContain(": string");
    // A fresh module instance (as in a new process) takes the cached code (this cache is outside
    // any project: owned, unsigned). A pack edited in a signed cache is not used
    // (test/tools/modules/cache-safety.test.ts).
    expect(text.split("\n")[1]).toBe("-");
    vi.resetModules();
    const cache = (await import("../../../src/tools/modules/cache.js")) as typeof import("../../../src/tools/modules/cache.js");
    expect(cache.readCachedCode(file, cache.cacheKey(file, await readFile(file, "utf8")), processCacheScope())).toContain('const origin = "transformed"');
    vi.resetModules();
    const fresh = (await import("../../../src/tools/modules/index.js")) as typeof import("../../../src/tools/modules/index.js");
    expect((await fresh.importModule(file)).origin).toBe("transformed");
  });

  it("serves a file by its stat once it was old when cached, and reads it again when it changed under the same size and mtime", async () => {
    const dir = await folder("stat", { "fresh.ts": 'export const v: string = "new";', "old.ts": 'export const v: string = "one";' });
    const fresh = join(dir, "fresh.ts");
    const old = join(dir, "old.ts");
    // Let old.ts age past the 2 s after which an unchanged stat is trusted; then write fresh.ts.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    await writeFile(fresh, 'export const v: string = "new!";');
    expect((await importModule(old)).v).toBe("one");
    expect((await importModule(fresh)).v).toBe("new!");
    await new Promise((resolve) => setImmediate(resolve)); // the pack is written after the burst of loads

    vi.resetModules();
    const cache = (await import("../../../src/tools/modules/cache.js")) as typeof import("../../../src/tools/modules/cache.js");
    expect(cache.readCachedIfUnchanged(old, processCacheScope())?.code).toContain('const v = "one"');
    expect(cache.readCachedIfUnchanged(fresh, processCacheScope())).toBeNull(); // written within 2 s of being read

    // Same size, mtime set back: only the inode's change time tells, and it does.
    const { atime, mtime } = await stat(old);
    await writeFile(old, 'export const v: string = "two";');
    await utimes(old, atime, mtime);
    expect(cache.readCachedIfUnchanged(old, processCacheScope())).toBeNull();
    vi.resetModules();
    const loader = (await import("../../../src/tools/modules/index.js")) as typeof import("../../../src/tools/modules/index.js");
    expect((await loader.importModule(old)).v).toBe("two");
  });

  it("ignores a corrupt pack and replaces it", async () => {
    const dir = await folder("corrupt", { "tool.ts": "export const ok: boolean = true;" });
    const file = join(dir, "tool.ts");
    await importModule(file);
    await new Promise((resolve) => setImmediate(resolve));
    const packs = (await readdir(join(cacheDir, "modules"))).map((name) => join(cacheDir, "modules", name));
    for (const pack of packs) await writeFile(pack, "garbage");
    vi.resetModules();
    const fresh = (await import("../../../src/tools/modules/index.js")) as typeof import("../../../src/tools/modules/index.js");
    expect((await fresh.importModule(file)).ok).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    const rewritten = await Promise.all(packs.map((pack) => readFile(pack, "utf8").catch(() => "")));
    expect(rewritten.some((text) => text.includes("const ok = true"))).toBe(true);
  });
});

describe("errors name the file", () => {
  it("reports a syntax error as file:line:column", async () => {
    const dir = await folder("syntax", { "bad.ts": "export const a = 1;\n\nconst b = (;\n" });
    const error = await rejection(importModule(join(dir, "bad.ts")));
    expect(error.message).toMatch(new RegExp(`^${escape(join(dir, "bad.ts"))}:3:\\d+: Unexpected token`));
  });

  it("reports an error only V8 sees (a redeclaration) as file:line, also in an imported module", async () => {
    const dir = await folder("v8-syntax", { "tool.ts": 'import "./dep";', "dep.ts": "let a = 1;\nlet a = 2;" });
    const error = await rejection(importModule(join(dir, "tool.ts")));
    expect(error.message).toMatch(new RegExp(`^${escape(join(dir, "dep.ts"))}:2:\\d+: Identifier 'a' has already been declared`));
  });

  it("keeps file:line in stack traces of thrown errors", async () => {
    const dir = await folder("stack", { "tool.ts": 'const x: number = 1;\n\n\nthrow new Error("at load " + x);' });
    const error = await rejection(importModule(join(dir, "tool.ts")));
    expect(error.message).toBe("at load 1");
    expect(error.stack).toContain(`${join(dir, "tool.ts")}:4:`);
  });
});

describe("tool files through the loader", () => {
  it("loads .ts, .mts and .mjs tools and a CommonJS .js tool", async () => {
    const body = (name: string) => `{ name: "${name}", label: "l", description: "d", inputSchema: { type: "object" }, execute: async () => toolResult("${name}") }`;
    const dir = await folder("tools", {
      "a.ts": `import { defineTool, toolResult } from "yiem";\nexport default defineTool(${body("a")});`,
      "b.mts": `import { toolResult } from "yiem";\nexport function getTool() { return ${body("b")}; }`,
      "c.mjs": `import { toolResult } from "yiem";\nexport default ${body("c")};`,
      "d.js": `const { toolResult } = require("yiem");\nmodule.exports = ${body("d")};`,
    });
    for (const name of ["a.ts", "b.mts", "c.mjs", "d.js"]) {
      const tool = await loadToolFile(join(dir, name));
      expect(tool.name).toBe(name[0]);
      expect((await tool.execute("id", {}, new AbortController().signal, () => {})).content).toEqual([{ type: "text", text: name[0] }]);
    }
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
