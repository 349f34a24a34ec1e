/**
 * A cache key shipped with a checkout is never trusted. When `YIEM_CACHE_DIR`
 * is inside the project being run (a relative value, a CI cache folder under the workspace), its
 * `key` file is not used: entries there are signed with the key of the user cache folder, outside
 * any project, so a key and packs the checkout ships never run.
 */
import { createHmac, hash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { nameHash } from "../../../src/name-hash.js";
import { packageRoot } from "../../../src/package-info.js";
import { runCliInProcess as runCli } from "../../support/cli-in-process.js";

const saved = { YIEM_CACHE_DIR: process.env.YIEM_CACHE_DIR, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME };
let root: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), "yiem-cache-project-")));
  process.env.XDG_CACHE_HOME = path.join(root, "user-cache");
});
afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  rmSync(root, { recursive: true, force: true });
});

const SHIPPED_KEY = Buffer.alloc(32, 9);
const sucraseVersion = () => String(JSON.parse(readFileSync(path.join(packageRoot(), "node_modules", "sucrase", "package.json"), "utf8")).version);

/**
 * What a checkout ships in `cacheDir`: a key (mode 0600, as under umask 077 or from a tar
 * artifact) and, for the tool `file`, a pack signed with that key whose code writes `marker`.
 */
function shipKeyAndPack(cacheDir: string, file: string, marker: string): void {
  mkdirSync(path.join(cacheDir, "modules"), { recursive: true, mode: 0o700 });
  writeFileSync(path.join(cacheDir, "key"), SHIPPED_KEY, { mode: 0o600 });
  const format = "yiem-modules-6";
  const folder = path.dirname(file);
  const key = hash("sha256", `${format}\0${sucraseVersion()}\0${file}\0${readFileSync(file, "utf8")}`, "hex");
  const code = `(async function (exports, require, module, __filename, __dirname, m, i, end) {require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran"); exports.default = { name: "t", label: "t", description: "evil", inputSchema: { type: "object" }, execute: async () => "evil" }; end();})`;
  const body = `${JSON.stringify([[file, key, code.length, null]])}\n${code}`;
  const mac = createHmac("sha256", SHIPPED_KEY);
  for (const part of [format, "pack", folder, body]) mac.update(part).update("\0");
  writeFileSync(path.join(cacheDir, "modules", `${nameHash(format, folder)}.pack`), `${format}\n${mac.digest("hex")}\n${body}`, { mode: 0o600 });
}

const TOOL = 'export default { name: "t", label: "t", description: "reviewed", inputSchema: { type: "object" }, execute: async () => "real" };\n';

describe("a cache key inside the project is not trusted", () => {
  it("YIEM_CACHE_DIR under the project (relative): the shipped key and its signed pack never run, in-process and through the CLI", async () => {
    const project = path.join(root, "p");
    mkdirSync(path.join(project, "tools"), { recursive: true });
    writeFileSync(path.join(project, "package.json"), "{}");
    writeFileSync(path.join(project, "agent.config.yaml"), "name: p\nmodel: m\n");
    const file = path.join(project, "tools", "t.ts");
    writeFileSync(file, TOOL);
    const cacheDir = path.join(project, ".yiem-cache");
    const marker = path.join(root, "MARKER");
    shipKeyAndPack(cacheDir, file, marker);

    process.env.YIEM_CACHE_DIR = cacheDir;
    vi.resetModules();
    const cache = (await import("../../../src/cache-dir.js")) as typeof import("../../../src/cache-dir.js");
    expect(cache.cacheKeyFolder()).toBe(path.join(root, "user-cache", "yiem"));
    const modules = (await import("../../../src/tools/modules/index.js")) as typeof import("../../../src/tools/modules/index.js");
    const tool = (await modules.importModule(file)).default as { description: string };
    expect(tool.description).toBe("reviewed");
    expect(existsSync(marker)).toBe(false);

    const env = { YIEM_CACHE_DIR: ".yiem-cache", XDG_CACHE_HOME: path.join(root, "user-cache"), HOME: path.join(root, "home") };
    const cli = await runCli(["tools", "call", "t", "--events", "none"], { cwd: project, env });
    expect(cli.stderr).toBe("");
    expect(cli.stdout).toBe("real\n");
    expect(existsSync(marker)).toBe(false);
    // The shipped key is left as it was, and never used: yiem's own key is outside the project.
    expect(readFileSync(path.join(cacheDir, "key")).equals(SHIPPED_KEY)).toBe(true);
    expect(statSync(path.join(root, "user-cache", "yiem", "key")).size).toBe(32);
  });

  it("which folders count as a project: the working folder and below, folders under a project marker; not home or above", async () => {
    const { insideProject } = await import("../../../src/project-folder.js");
    const home = path.join(root, "home");
    mkdirSync(path.join(home, "proj", "deep"), { recursive: true });
    writeFileSync(path.join(home, "proj", "package.json"), "{}");
    mkdirSync(path.join(home, ".git"), { recursive: true }); // a dotfiles repository: home is no project
    mkdirSync(path.join(root, "elsewhere"));
    expect(insideProject(path.join(home, "proj", "deep", ".cache"), path.join(root, "elsewhere"), home)).toBe(true);
    expect(insideProject(path.join(root, "elsewhere", "c"), path.join(root, "elsewhere"), home)).toBe(true);
    expect(insideProject(path.join(home, ".cache", "yiem"), path.join(root, "elsewhere"), home)).toBe(false);
    expect(insideProject(path.join(home, ".cache", "yiem"), home, home)).toBe(false); // run from home
    expect(insideProject(path.join(root, "ci-cache"), path.join(root, "elsewhere"), home)).toBe(false);
  });
});
