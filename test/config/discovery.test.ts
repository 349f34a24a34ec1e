/**
 * Finding the spec runs no code, reads only the documented places, and
 * never leaves the project (git root, home folder, untrusted parents, the file-system root); a
 * FIFO named like a spec or a tool file is refused without hanging.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findSpecFile, mayBePlanted, searchableFolder, searchFolders } from "../../src/config/discover.js";
import { loadSpec } from "../../src/config/load.js";
import { importModuleFile, loadToolFile, loadTools } from "../../src/tools/loader.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

let root: string;
let cacheDir: string;
const savedCacheDir = process.env.YIEM_CACHE_DIR;

beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), "yiem-discovery-")));
  cacheDir = mkdtempSync(path.join(tmpdir(), "yiem-discovery-cache-"));
  process.env.YIEM_CACHE_DIR = cacheDir;
});
afterEach(() => {
  if (savedCacheDir === undefined) delete process.env.YIEM_CACHE_DIR;
  else process.env.YIEM_CACHE_DIR = savedCacheDir;
  rmSync(root, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

/** Writes `files` (relative path → text; a trailing `/` makes a folder) under `root`. */
function write(files: Record<string, string>): void {
  for (const [relative, text] of Object.entries(files)) {
    const target = path.join(root, relative);
    if (relative.endsWith("/")) mkdirSync(target, { recursive: true });
    else {
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, text);
    }
  }
}

const load = (cwd: string, configPath?: string) =>
  loadSpec({ cwd, env: {}, overrides: {}, requireModel: false, ...(configPath ? { configPath } : {}) });

const GOOD_SPEC = 'name: good\nmodel: m\ntools: { deny: ["danger"] }\n';
const MARKER_JS = (marker: string) => `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran"); module.exports = {};\n`;

describe("no code runs while finding the spec (cosmiconfig meta config)", () => {
  it("a .config/config.{js,cjs,mjs,ts} that writes a marker never runs, in config, tools list and run --dry-run", async () => {
    const marker = path.join(root, "MARKER");
    write({
      "p/package.json": "{}",
      "p/agent.config.yaml": GOOD_SPEC,
      "p/.config/config.js": MARKER_JS(marker),
      "p/.config/config.cjs": MARKER_JS(marker),
      "p/.config/config.mjs": `import { writeFileSync } from "node:fs"; writeFileSync(${JSON.stringify(marker)}, "ran"); export default {};\n`,
      "p/.config/config.ts": `import { writeFileSync } from "node:fs"; writeFileSync(${JSON.stringify(marker)}, "ran"); export default {};\n`,
    });
    const cwd = path.join(root, "p");
    const config = await runCli(["config", "--json"], { cwd, env: { YIEM_CACHE_DIR: cacheDir } });
    expect(config.code).toBe(0);
    expect(JSON.parse(config.stdout).name).toBe("good");
    const tools = await runCli(["tools", "list"], { cwd, env: { YIEM_CACHE_DIR: cacheDir } });
    expect(tools.code).toBe(0);
    const dry = await runCli(["run", "--dry-run", "hi"], { cwd, env: { YIEM_CACHE_DIR: cacheDir } });
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout).spec.name).toBe("good");
    expect(existsSync(marker)).toBe(false);
  });

  it("a .config/config.json naming another spec is ignored", async () => {
    write({
      "p/package.json": "{}",
      "p/agent.config.yaml": GOOD_SPEC,
      "p/evil.yaml": "name: evil\nmodel: m\n",
      "p/.config/config.json": JSON.stringify({ cosmiconfig: { searchPlaces: ["evil.yaml"], mergeSearchPlaces: false } }),
    });
    const spec = await load(path.join(root, "p"));
    expect(spec.name).toBe("good");
    expect(spec.configPath).toBe(path.join(root, "p", "agent.config.yaml"));
    expect(spec.tools.deny).toEqual(["danger"]);
    const cli = await runCli(["config", "--json"], { cwd: path.join(root, "p"), env: { YIEM_CACHE_DIR: cacheDir } });
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ name: "good", tools: { deny: ["danger"] } });
  });

  it("package.json#cosmiconfig cannot swap the spec or drop tools.deny and hooks, in config, tools list and run --dry-run", async () => {
    const hooked = `${GOOD_SPEC}hooks: { beforeToolCall: { command: ["true"] } }\n`;
    write({
      "p/package.json": JSON.stringify({ cosmiconfig: { searchPlaces: ["evil.yaml"], mergeSearchPlaces: false } }),
      "p/agent.config.yaml": hooked,
      "p/evil.yaml": "name: evil\nmodel: m\n",
      "p/.config/config.json": JSON.stringify({ cosmiconfig: { searchPlaces: ["evil.yaml"] } }),
    });
    const cwd = path.join(root, "p");
    const spec = await load(cwd);
    expect(spec).toMatchObject({ name: "good", configPath: path.join(cwd, "agent.config.yaml"), tools: { deny: ["danger"] } });
    expect(spec.hooks.beforeToolCall).toBeDefined();
    const env = { YIEM_CACHE_DIR: cacheDir };
    const dry = await runCli(["run", "--dry-run", "hi"], { cwd, env });
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout).spec).toMatchObject({ name: "good", tools: { deny: ["danger"] } });
    const tools = await runCli(["tools", "list", "--json"], { cwd, env });
    expect(tools.code).toBe(0);
    expect(tools.stderr).toBe("");
  });

  it("a broken .config/config.json or .config/config.yaml does not break yiem", async () => {
    write({
      "p/package.json": "{}",
      "p/agent.config.yaml": GOOD_SPEC,
      "p/.config/config.json": "{ not json",
      "p/.config/config.yaml": "a: [unclosed\n",
    });
    const cli = await runCli(["config", "--json"], { cwd: path.join(root, "p"), env: { YIEM_CACHE_DIR: cacheDir } });
    expect(cli.stderr).toBe("");
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout).name).toBe("good");
  });

  it("reads only the documented names: a .yiemrc.js or yiem.config.js is not a spec", async () => {
    const marker = path.join(root, "MARKER");
    write({ "p/package.json": "{}", "p/.yiemrc.js": MARKER_JS(marker), "p/yiem.config.js": MARKER_JS(marker), "p/.yiemrc.yml": "name: yml\n" });
    expect(await findSpecFile(path.join(root, "p"))).toBeNull();
    expect(existsSync(marker)).toBe(false);
  });
});

describe("where the search stops", () => {
  it("stops at the git root (.git folder or file) when no package.json is above", async () => {
    write({ "agent.config.yaml": "name: outside\n", "repo/.git/": "", "repo/src/deep/": "", "wt/.git": "gitdir: /elsewhere\n", "wt/src/": "" });
    expect(await findSpecFile(path.join(root, "repo", "src", "deep"), { home: "" })).toBeNull();
    expect(await findSpecFile(path.join(root, "wt", "src"), { home: "" })).toBeNull();
    // The git root itself is searched.
    write({ "repo/agent.config.yaml": "name: inside\n" });
    expect((await findSpecFile(path.join(root, "repo", "src", "deep"), { home: "" }))?.value).toEqual({ name: "inside" });
  });

  it("stops at the home folder (searched last) and never finds a spec above it", async () => {
    write({ "agent.config.yaml": "name: above-home\n", "home/u/work/deep/": "" });
    const home = path.join(root, "home", "u");
    expect(await findSpecFile(path.join(home, "work", "deep"), { home })).toBeNull();
    write({ "home/u/.yiemrc": "name: home\n" });
    expect((await findSpecFile(path.join(home, "work", "deep"), { home }))?.value).toEqual({ name: "home" });
    // Through the CLI, with HOME set: the spec above home is not found either.
    rmSync(path.join(home, ".yiemrc"));
    const cli = await runCli(["config", "--json"], { cwd: path.join(home, "work", "deep"), env: { HOME: home, YIEM_CACHE_DIR: cacheDir } });
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout).configPath).toBeNull();
  });

  it("never searches the file-system root", () => {
    expect([...searchFolders("/", undefined)]).toEqual([]);
    const folders = [...searchFolders("/usr/share", undefined)];
    expect(folders).toEqual(["/usr/share", "/usr"]);
  });

  it("does not go up into a folder writable by everyone (like /tmp)", async () => {
    write({ "shared/agent.config.yaml": "name: planted\n", "shared/me/work/": "" });
    const shared = path.join(root, "shared");
    chmodSync(shared, 0o777);
    expect(await findSpecFile(path.join(shared, "me", "work"), { home: "" })).toBeNull();
    chmodSync(shared, 0o755);
    expect((await findSpecFile(path.join(shared, "me", "work"), { home: "" }))?.value).toEqual({ name: "planted" });
    // The temp folder itself is world-writable: a search from a fresh temp folder never reaches it.
    expect([...searchFolders(path.join(root, "shared"), undefined)]).not.toContain(path.dirname(root));
  });

  it("does not go up into another user's folder (root-owned folders are fine)", () => {
    const folder = (uid: number, mode: number) => ({ uid, mode, isDirectory: () => true });
    expect(searchableFolder(folder(1000, 0o40755), 1000)).toBe(true);
    expect(searchableFolder(folder(0, 0o40755), 1000)).toBe(true);
    expect(searchableFolder(folder(1001, 0o40755), 1000)).toBe(false);
    expect(searchableFolder(folder(1000, 0o40777), 1000)).toBe(false);
    expect(searchableFolder(folder(0, 0o41777), 1000)).toBe(false); // /tmp
    expect(searchableFolder(undefined, 1000)).toBe(false);
  });

  it("really skips a parent owned by another user (checked when the tests run as root)", async () => {
    write({ "theirs/agent.config.yaml": "name: theirs\n", "theirs/mine/": "" });
    const theirs = path.join(root, "theirs");
    const asRoot = process.getuid?.() === 0;
    if (asRoot) execFileSync("chown", ["12345:12345", theirs]);
    const found = await findSpecFile(path.join(theirs, "mine"), { home: "" });
    // As root the parent now belongs to uid 12345 and is skipped; otherwise it is the user's own folder.
    expect(found === null).toBe(asRoot);
    expect(statSync(theirs).uid === 12345).toBe(asRoot);
  });
});

describe("a spec another user may have planted in a shared folder", () => {
  it("is refused when it is another user's and its folder is group- or world-writable", () => {
    expect(mayBePlanted({ uid: 12345 }, { mode: 0o41777 }, 1000)).toBe(true);
    expect(mayBePlanted({ uid: 12345 }, { mode: 0o40775 }, 1000)).toBe(true);
    expect(mayBePlanted({ uid: 12345 }, { mode: 0o40755 }, 1000)).toBe(false); // only its owner can write there
    expect(mayBePlanted({ uid: 1000 }, { mode: 0o41777 }, 1000)).toBe(false); // the user's own
    expect(mayBePlanted({ uid: 0 }, { mode: 0o41777 }, 1000)).toBe(false); // root's
    expect(mayBePlanted({ uid: 12345 }, { mode: 0o41777 }, undefined)).toBe(false); // no POSIX owners
  });

  it("in a world-writable folder: another user's spec is an error naming the file, and -c still uses it", async () => {
    write({ "shared/": "" });
    const shared = path.join(root, "shared");
    chmodSync(shared, 0o1777);
    writeFileSync(path.join(shared, "agent.config.yaml"), "name: planted\nmodel: m\n");
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      execFileSync("chown", ["12345:12345", path.join(shared, "agent.config.yaml")]);
      await expect(load(shared)).rejects.toThrow(/config file agent\.config\.yaml belongs to another user \(uid 12345\).*-c/);
    } else {
      // Not root: the file can only be the user's own, which is used.
      expect((await load(shared)).name).toBe("planted");
    }
    expect((await load(shared, "agent.config.yaml")).name).toBe("planted");
  });
});

describe("special files named like a spec or a tool", () => {
  const mkfifo = (file: string) => execFileSync("mkfifo", [file]);

  it("a FIFO named agent.config.yaml is a clear spec error, without hanging", async () => {
    write({ "p/package.json": "{}" });
    mkfifo(path.join(root, "p", "agent.config.yaml"));
    await expect(load(path.join(root, "p"))).rejects.toThrow(/config file agent\.config\.yaml is not a regular file \(a FIFO\)/);
    await expect(load(root, "p/agent.config.yaml")).rejects.toThrow(/config file p\/agent\.config\.yaml is not a regular file \(a FIFO\)/);
    const cli = await runCli(["config"], { cwd: path.join(root, "p"), env: { YIEM_CACHE_DIR: cacheDir }, timeoutMs: 10_000 });
    expect(cli.signal).toBeNull();
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/not a regular file \(a FIFO\)/);
  });

  it("a systemPromptFile that is a FIFO or links to a device (/dev/zero) is a clear spec error, never read", async () => {
    write({ "p/package.json": "{}", "p/agent.config.yaml": "name: p\nmodel: m\nsystemPromptFile: ./prompt.md\n" });
    const cwd = path.join(root, "p");
    const prompt = path.join(cwd, "prompt.md");
    execFileSync("ln", ["-s", "/dev/zero", prompt]);
    await expect(load(cwd)).rejects.toThrow(/systemPromptFile: system prompt file "\.\/prompt\.md" is not a regular file \(a device\)/);
    rmSync(prompt);
    mkfifo(prompt);
    await expect(load(cwd)).rejects.toThrow(/system prompt file "\.\/prompt\.md" is not a regular file \(a FIFO\)/);
    const started = Date.now();
    const cli = await runCli(["run", "--dry-run", "hi"], { cwd, env: { YIEM_CACHE_DIR: cacheDir }, timeoutMs: 10_000 });
    expect(cli.signal).toBeNull();
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/is not a regular file \(a FIFO\)/);
    expect(Date.now() - started).toBeLessThan(8_000);
    // A regular file is read as before.
    rmSync(prompt);
    writeFileSync(prompt, "Be brief.\n");
    expect((await load(cwd)).systemPrompt).toBe("Be brief.\n");
  });

  it("a folder named like a spec is skipped, as before", async () => {
    write({ "p/package.json": "{}", "p/agent.config.yaml/": "", "p/.yiemrc": "name: rc\n" });
    expect((await findSpecFile(path.join(root, "p")))?.value).toEqual({ name: "rc" });
  });

  it("a FIFO named like a tool file (or linked as one) is a problem; every other tool loads", async () => {
    write({ "tools/ok.ts": 'export default { name: "ok", label: "ok", description: "d", inputSchema: { type: "object" }, execute: async () => ({ content: [] }) };\n' });
    mkfifo(path.join(root, "tools", "pipe.ts"));
    mkfifo(path.join(root, "fifo.tool.json"));
    execFileSync("ln", ["-s", path.join(root, "fifo.tool.json"), path.join(root, "tools", "linked.tool.json")]);
    const { registry, problems } = await loadTools([path.join(root, "tools")]);
    expect(registry.list().map((t) => t.name)).toEqual(["ok"]);
    expect(problems).toEqual([
      { path: path.join(root, "tools", "linked.tool.json"), reason: "not a regular file (a FIFO)" },
      { path: path.join(root, "tools", "pipe.ts"), reason: "not a regular file (a FIFO)" },
    ]);
  });

  it("a FIFO given as one tool or module hook file is refused at once", async () => {
    mkfifo(path.join(root, "hook.ts"));
    await expect(importModuleFile(path.join(root, "hook.ts"))).rejects.toThrow("not a regular file (a FIFO)");
    await expect(loadToolFile(path.join(root, "hook.ts"))).rejects.toThrow("not a regular file (a FIFO)");
  });
});
