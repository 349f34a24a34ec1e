/**
 * The module and spec caches trust only a folder of this user that nobody else can write, and
 * only regular files; a cache inside a project (one a checkout could ship) is signed, and there
 * only what this user's yiem wrote (an HMAC under a per-user key kept outside any project) is
 * used; an owned cache (outside any project, or the package's own folder) needs no signatures.
 * Old entries are pruned. Most tests here use a signed cache: `root` is a project (`.git`).
 */
import { execFileSync } from "node:child_process";
import { createHash, hash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cacheBaseFor, cacheKeyFolder, cacheTrust, cacheTrustFor, processCacheScope, trustedCacheFolder, UNSIGNED } from "../../../src/cache-dir.js";
import { pruneCacheFolder } from "../../../src/cache-prune.js";
import { nameHash } from "../../../src/name-hash.js";
import { packageRoot } from "../../../src/package-info.js";

const DAY = 24 * 60 * 60 * 1000;
const MODULES_FORMAT = "yiem-modules-6";
const SPEC_FORMAT = "spec-cache-3";
const saved = { YIEM_CACHE_DIR: process.env.YIEM_CACHE_DIR, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME };
let root: string;
let cacheDir: string;
/** The user cache folder (XDG_CACHE_HOME), outside the project: where the key lives. */
let userCache: string;
let keyFile: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), "yiem-cache-hardening-")));
  mkdirSync(path.join(root, ".git")); // a checkout: a cache in it is signed
  cacheDir = path.join(root, "cache");
  mkdirSync(cacheDir, { mode: 0o700 });
  userCache = realpathSync(mkdtempSync(path.join(tmpdir(), "yiem-cache-user-")));
  keyFile = path.join(userCache, "yiem", "key");
  process.env.YIEM_CACHE_DIR = cacheDir;
  process.env.XDG_CACHE_HOME = userCache;
});
afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  rmSync(root, { recursive: true, force: true });
  rmSync(userCache, { recursive: true, force: true });
});

/** A fresh copy of yiem's modules, as a new process would have (nothing memoised). */
async function fresh() {
  vi.resetModules();
  return {
    modules: (await import("../../../src/tools/modules/index.js")) as typeof import("../../../src/tools/modules/index.js"),
    cache: (await import("../../../src/tools/modules/cache.js")) as typeof import("../../../src/tools/modules/cache.js"),
    config: (await import("../../../src/config/load.js")) as typeof import("../../../src/config/load.js"),
  };
}

const flushed = () => new Promise((resolve) => setImmediate(resolve));

/** Writes a tool source under `root/<dir>`; its absolute path. */
function source(relative: string, text: string): string {
  const file = path.join(root, relative);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

/** Writes the project `p/` with a spec named `name`; returns a loader of it through `config`. */
function specProject(name: string): (config: typeof import("../../../src/config/load.js")) => ReturnType<typeof import("../../../src/config/load.js").loadSpec> {
  source("p/package.json", "{}");
  source("p/agent.config.yaml", `name: ${name}\nmodel: m\n`);
  return (config) => config.loadSpec({ cwd: path.join(root, "p"), env: { YIEM_CACHE_DIR: cacheDir, XDG_CACHE_HOME: userCache }, overrides: {}, requireModel: false });
}

const sucraseVersion = () => String(JSON.parse(readFileSync(path.join(packageRoot(), "node_modules", "sucrase", "package.json"), "utf8")).version);

/** Compiled code that, when the loader runs it, writes `marker` and exports `origin: "evil"`. */
const evilCode = (marker: string) =>
  `(async function (exports, require, module, __filename, __dirname, m, i, end) {require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran"); exports.origin = "evil"; end();})`;

/** The pack file of the source folder `folder` in `cache` (named as src/tools/modules/cache.ts names it). */
const packFile = (cache: string, folder: string) => path.join(cache, "modules", `${nameHash(MODULES_FORMAT, folder)}.pack`);

/**
 * Plants, for `file`, what a checkout could ship in its cache folder: a pack with the right name,
 * the right (public) content key and file stat, holding evil code, with `signature` (UNSIGNED, as
 * an owned cache's packs are, or an HMAC made under a key the attacker chose).
 */
function plantPack(file: string, marker: string, signature: "unsigned" | "forged"): void {
  const text = readFileSync(file, "utf8");
  const st = statSync(file);
  const stat = `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}:${st.dev}`;
  const code = evilCode(marker);
  mkdirSync(path.join(cacheDir, "modules"), { recursive: true, mode: 0o700 });
  const key = hash("sha256", `${MODULES_FORMAT}\0${sucraseVersion()}\0${file}\0${text}`, "hex");
  const body = `${JSON.stringify([[file, key, code.length, stat]])}\n${code}`;
  const line = signature === "unsigned" ? UNSIGNED : createHash("sha256").update(`attacker-key\0${body}`).digest("hex");
  writeFileSync(packFile(cacheDir, path.dirname(file)), `${MODULES_FORMAT}\n${line}\n${body}`);
}

describe("module cache: in a signed cache only packs this user's yiem wrote are run", () => {
  it("a planted pack with the right content key but evil code never runs (unsigned, or signed with another key)", async () => {
    const file = source("tools/t.ts", 'export const origin: string = "real";\n');
    const marker = path.join(root, "MARKER");
    mkdirSync(path.dirname(keyFile), { recursive: true, mode: 0o700 });
    writeFileSync(keyFile, Buffer.alloc(32, 7), { mode: 0o600 }); // even a known key file…
    chmodSync(keyFile, 0o644); // …that others could read is replaced, not used
    await new Promise((resolve) => setTimeout(resolve, 2_100)); // old enough for its stat to be trusted
    for (const signature of ["unsigned", "forged"] as const) {
      plantPack(file, marker, signature);
      const { modules } = await fresh();
      expect((await modules.importModule(file)).origin).toBe("real");
      expect(existsSync(marker)).toBe(false);
    }
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyFile).equals(Buffer.alloc(32, 7))).toBe(false);
  });

  it("a signed pack whose code was changed afterwards is ignored; an untouched one is used by a new process", async () => {
    const file = source("signed/tool.ts", 'export const origin: string = "transformed";\n');
    const first = await fresh();
    expect((await first.modules.importModule(file)).origin).toBe("transformed");
    await flushed();
    const pack = packFile(cacheDir, path.dirname(file));
    const text = readFileSync(pack, "utf8");
    expect(text.split("\n")[1]).toMatch(/^[0-9a-f]{64}$/); // the signature line

    // A new process takes the cached code (no transform needed).
    const second = await fresh();
    const key = second.cache.cacheKey(file, readFileSync(file, "utf8"));
    expect(second.cache.readCachedCode(file, key, processCacheScope())).toContain('const origin = "transformed"');

    // The same pack with its code edited (signature kept) is not trusted.
    writeFileSync(pack, text.replace('"transformed"', '"from cache!"'));
    const third = await fresh();
    expect(third.cache.readCachedCode(file, key, processCacheScope())).toBeNull();
    expect((await third.modules.importModule(file)).origin).toBe("transformed");
  });

  it("keeps the key in the user cache folder, out of the package's folder and of any project (none there: a signed cache caches nothing)", async () => {
    expect(cacheKeyFolder()).toBe(path.join(userCache, "yiem"));
    delete process.env.YIEM_CACHE_DIR;
    expect(cacheKeyFolder()).toBe(path.join(userCache, "yiem"));
    expect(String(cacheKeyFolder()).startsWith(packageRoot())).toBe(false);
    process.env.YIEM_CACHE_DIR = cacheDir;
    process.env.XDG_CACHE_HOME = path.join(root, "xdg"); // the user cache folder inside the checkout
    vi.resetModules();
    const cache = (await import("../../../src/cache-dir.js")) as typeof import("../../../src/cache-dir.js");
    expect(cache.cacheKeyFolder()).toBeNull();
    expect(cache.cacheTrust()).toBeNull();
    expect(cache.cacheFolder("modules")).toBeNull();
    expect(existsSync(path.join(root, "xdg"))).toBe(false);
  });
});

describe("owned caches: used as they are, no key, no signatures", () => {
  it("a YIEM_CACHE_DIR outside any project is owned: its packs and spec entries are unsigned, and no key is made", async () => {
    const outside = realpathSync(mkdtempSync(path.join(tmpdir(), "yiem-cache-owned-")));
    try {
      process.env.YIEM_CACHE_DIR = outside;
      const file = source("tools/t.ts", 'export const origin: string = "real";\n');
      const { modules } = await fresh();
      expect(cacheTrust()).toBe("owned");
      expect((await modules.importModule(file)).origin).toBe("real");
      await flushed();
      expect(readFileSync(packFile(outside, path.dirname(file)), "utf8").split("\n")[1]).toBe(UNSIGNED);
      expect(existsSync(keyFile)).toBe(false);
      expect(existsSync(path.join(outside, "key"))).toBe(false);
      // A new process uses the unsigned pack: the transformed code, without transforming again.
      const second = await fresh();
      const key = second.cache.cacheKey(file, readFileSync(file, "utf8"));
      expect(second.cache.readCachedCode(file, key, processCacheScope())).toContain('const origin = "real"');
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("an owned spec entry is used only for the exact path and text it was made from", async () => {
    const outside = realpathSync(mkdtempSync(path.join(tmpdir(), "yiem-cache-owned-")));
    try {
      const specFile = source("p/agent.config.yaml", "name: first\nmodel: m\n");
      writeFileSync(path.join(root, "p", "package.json"), "{}");
      const load = async () =>
        (await fresh()).config.loadSpec({ cwd: path.join(root, "p"), env: { YIEM_CACHE_DIR: outside, XDG_CACHE_HOME: userCache }, overrides: {}, requireModel: false });
      expect((await load()).name).toBe("first");
      const specs = path.join(outside, "specs");
      const parse = `${nameHash(SPEC_FORMAT, "parse", specFile)}.json`;
      expect(readFileSync(path.join(specs, parse), "utf8").split("\n")[0]).toBe(UNSIGNED);
      // Same length, other text: the entry (one per path) does not stand for it, and is replaced.
      writeFileSync(specFile, "name: other\nmodel: m\n");
      expect((await load()).name).toBe("other");
      expect(readFileSync(path.join(specs, parse), "utf8")).toContain("name: other");
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("a 'valid' mark stands for the exact schema text and value; a parse for the exact text", async () => {
    const outside = realpathSync(mkdtempSync(path.join(tmpdir(), "yiem-cache-owned-")));
    try {
      vi.resetModules();
      const specCache = (await import("../../../src/config/spec-cache.js")) as typeof import("../../../src/config/spec-cache.js");
      const scope = { env: { YIEM_CACHE_DIR: outside, XDG_CACHE_HOME: userCache }, cwd: userCache, home: userCache };
      specCache.storeValid(scope, { name: "a" }, "schema text A");
      expect(specCache.knownValid(scope, { name: "a" }, "schema text A")).toBe(true);
      expect(specCache.knownValid(scope, { name: "a" }, "schema text B")).toBe(false); // a new schema checks again
      expect(specCache.knownValid(scope, { name: "b" }, "schema text A")).toBe(false);
      specCache.storeParse(scope, "/p/agent.yaml", "name: a\n", { name: "a" });
      expect(specCache.cachedParse(scope, "/p/agent.yaml", "name: a\n")).toEqual({ value: { name: "a" } });
      expect(specCache.cachedParse(scope, "/p/agent.yaml", "name: b\n")).toBeUndefined();
      expect(specCache.cachedParse(scope, "/q/agent.yaml", "name: a\n")).toBeUndefined();
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("with no home known and no absolute XDG_CACHE_HOME there is no user cache folder (a relative one would be in the checkout)", async () => {
    vi.resetModules();
    const cache = (await import("../../../src/cache-dir.js")) as typeof import("../../../src/cache-dir.js");
    const project = path.join(root, "p");
    mkdirSync(project, { recursive: true });
    const scope = (env: NodeJS.ProcessEnv) => ({ env, cwd: project, home: "" });
    expect(cache.cacheKeyFolder(scope({}))).toBeNull();
    expect(cache.cacheKeyFolder(scope({ XDG_CACHE_HOME: ".cache" }))).toBeNull();
    expect(cache.cacheKeyFolder(scope({ XDG_CACHE_HOME: userCache }))).toBe(path.join(userCache, "yiem"));
    // A chosen cache in the checkout is signed even with no home known (nothing is exempt).
    const inCheckout = scope({ YIEM_CACHE_DIR: ".cache", XDG_CACHE_HOME: userCache });
    expect(cache.cacheTrust(inCheckout)).toBeInstanceOf(Buffer);
  });

  it("a chosen cache in the working folder is signed even when the working folder is home (a checkout as HOME, a container's WORKDIR)", async () => {
    vi.resetModules();
    const cache = (await import("../../../src/cache-dir.js")) as typeof import("../../../src/cache-dir.js");
    const { insideProject } = await import("../../../src/project-folder.js");
    const home = path.join(root, "home-checkout");
    mkdirSync(home, { recursive: true });
    expect(insideProject(path.join(home, ".cache"), home, home)).toBe(false); // the user cache folder rule: home is no project
    expect(insideProject(path.join(home, ".cache"), home, home, { chosen: true })).toBe(true);
    expect(cache.cacheTrust({ env: { YIEM_CACHE_DIR: ".cache", XDG_CACHE_HOME: userCache }, cwd: home, home })).toBeInstanceOf(Buffer);
  });

  it("trust rules: the package's own folder and any folder outside a project are owned; a chosen folder inside one is signed; the user folder inside one caches nothing", () => {
    const key = Buffer.alloc(32, 1);
    const pkg = "/opt/yiem/node_modules/.cache/yiem";
    const inProject = (...dirs: string[]) => (dir: string) => dirs.includes(dir);
    const trust = (base: string, explicit: boolean, inside: (dir: string) => boolean) => cacheTrustFor({ base, explicit, packageCache: pkg, inProject: inside, key: () => key });
    expect(trust(pkg, false, inProject(pkg))).toBe("owned"); // a local install in a checkout: as trusted as its code
    expect(trust("/home/u/.cache/yiem", false, inProject())).toBe("owned");
    expect(trust("/home/u/.cache/yiem", false, inProject("/home/u/.cache/yiem"))).toBeNull();
    expect(trust("/ci/cache", true, inProject())).toBe("owned");
    expect(trust("/work/repo/.cache", true, inProject("/work/repo/.cache"))).toBe(key);
    expect(trust(pkg, true, inProject(pkg))).toBe(key); // chosen: the package rule is for the default only
  });
});

/** An entry of the spec cache as src/config/spec-cache.ts writes it, with `signature`. */
function specEntry(signature: string, key: string[], value: unknown): string {
  return `${signature}\n${JSON.stringify({ key, value })}`;
}

describe("spec cache: planted or edited entries are ignored in a signed cache", () => {
  it("a planted parse (swapping the spec) and a planted 'valid' mark (hiding an unknown key) are not used", async () => {
    const specs = path.join(cacheDir, "specs");
    mkdirSync(specs, { recursive: true, mode: 0o700 });
    const specFile = source("p/agent.config.yaml", 'name: good\nmodel: m\ntools: { deny: ["danger"] }\n');
    writeFileSync(path.join(root, "p", "package.json"), "{}");
    const text = readFileSync(specFile, "utf8");
    writeFileSync(path.join(specs, `${nameHash(SPEC_FORMAT, "parse", specFile)}.json`), specEntry(UNSIGNED, ["parse", specFile, text], { name: "evil", model: "m" }));
    const { config } = await fresh();
    const env = { YIEM_CACHE_DIR: cacheDir, XDG_CACHE_HOME: userCache };
    const spec = await config.loadSpec({ cwd: path.join(root, "p"), env, overrides: {}, requireModel: false });
    expect(spec.name).toBe("good");
    expect(spec.tools.deny).toEqual(["danger"]);

    const badFile = source("q/agent.config.yaml", "name: x\nmodel: m\nsneaky: 1\n");
    writeFileSync(path.join(root, "q", "package.json"), "{}");
    const schemaText = readFileSync(path.join(packageRoot(), "schema", "agent.schema.json"), "utf8");
    const json = JSON.stringify({ name: "x", model: "m", sneaky: 1 });
    writeFileSync(path.join(specs, `${nameHash(SPEC_FORMAT, "valid", json)}.ok`), specEntry(UNSIGNED, ["valid", json, schemaText], true));
    await expect(config.loadSpec({ cwd: path.dirname(badFile), env, overrides: {}, requireModel: false })).rejects.toThrow(/sneaky/);
  });

  it("an entry whose body was edited (signature kept) is ignored", async () => {
    const loadWith = specProject("good");
    const load = async () => loadWith((await fresh()).config);
    expect((await load()).name).toBe("good");
    const specs = path.join(cacheDir, "specs");
    const parses = readdirSync(specs).filter((n) => n.endsWith(".json"));
    expect(parses.length).toBeGreaterThan(0);
    for (const name of parses) {
      const entry = readFileSync(path.join(specs, name), "utf8");
      expect(entry.split("\n")[0]).toMatch(/^[0-9a-f]{64}$/);
      writeFileSync(path.join(specs, name), entry.replace('"name":"good"', '"name":"evil"'));
      expect(readFileSync(path.join(specs, name), "utf8")).toContain('"evil"');
    }
    expect((await load()).name).toBe("good");
  });
});

describe("cache folders: only the user's own, not writable by others", () => {
  for (const mode of [0o777, 0o770, 0o1777]) {
    it(`a cache folder with mode ${mode.toString(8)} is not used (nothing read or written there)`, async () => {
      chmodSync(cacheDir, mode);
      const file = source("tools/t.ts", 'export const origin: string = "real";\n');
      plantPack(file, path.join(root, "MARKER"), "unsigned");
      const before = readdirSync(cacheDir).sort();
      const { modules, config } = await fresh();
      expect((await modules.importModule(file)).origin).toBe("real");
      expect((await specProject("good")(config)).name).toBe("good");
      await flushed();
      expect(readdirSync(cacheDir).sort()).toEqual(before);
      expect(existsSync(path.join(root, "MARKER"))).toBe(false);
    });
  }

  it("owner and mode rules, and the fallback: package folder → user folder; YIEM_CACHE_DIR → none", () => {
    const folder = (uid: number, mode: number) => ({ uid, mode, isDirectory: () => true });
    expect(trustedCacheFolder(folder(1000, 0o40700), 1000)).toBe(true);
    expect(trustedCacheFolder(folder(1000, 0o40755), 1000)).toBe(true);
    expect(trustedCacheFolder(folder(1000, 0o40775), 1000)).toBe(false);
    expect(trustedCacheFolder(folder(1000, 0o40757), 1000)).toBe(false);
    expect(trustedCacheFolder(folder(0, 0o40755), 1000)).toBe(false); // not the user's, even root's
    expect(trustedCacheFolder({ uid: 1000, mode: 0o100600, isDirectory: () => false }, 1000)).toBe(false);
    const only = (...ok: string[]) => (dir: string) => ok.includes(dir);
    const pkg = "/opt/yiem/node_modules/.cache/yiem";
    const user = "/home/u/.cache/yiem";
    expect(cacheBaseFor({ chosen: pkg, explicit: false, user, trusted: only(pkg, user) })).toBe(pkg);
    expect(cacheBaseFor({ chosen: pkg, explicit: false, user, trusted: only(user) })).toBe(user);
    expect(cacheBaseFor({ chosen: pkg, explicit: false, user, trusted: only() })).toBeNull();
    expect(cacheBaseFor({ chosen: "/tmp/shared", explicit: true, user, trusted: only(user) })).toBeNull();
  });

  it("a modules or specs folder that is a symbolic link is not used", async () => {
    const elsewhere = path.join(root, "elsewhere");
    mkdirSync(elsewhere, { mode: 0o700 });
    execFileSync("ln", ["-s", elsewhere, path.join(cacheDir, "modules")]);
    execFileSync("ln", ["-s", elsewhere, path.join(cacheDir, "specs")]);
    const file = source("tools/t.ts", 'export const origin: string = "real";\n');
    const { modules, config } = await fresh();
    expect((await modules.importModule(file)).origin).toBe("real");
    expect((await specProject("good")(config)).name).toBe("good");
    await flushed();
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it("a cache folder owned by another user is not used (checked for real when the tests run as root)", async () => {
    const asRoot = process.getuid?.() === 0;
    if (asRoot) execFileSync("chown", ["12345:12345", cacheDir]);
    const file = source("tools/t.ts", 'export const origin: string = "real";\n');
    const { modules } = await fresh();
    expect((await modules.importModule(file)).origin).toBe("real");
    await flushed();
    // As root the folder now belongs to uid 12345: nothing is written. Otherwise it is ours and used.
    expect(existsSync(path.join(cacheDir, "modules"))).toBe(!asRoot);
  });
});

describe("special files in the cache are refused, never waited on", () => {
  it("a FIFO as the pack or as the key does not hang, and is replaced by a regular file", async () => {
    const file = source("fifo/t.ts", 'export const origin: string = "real";\n');
    const modules = path.join(cacheDir, "modules");
    mkdirSync(modules, { mode: 0o700 });
    const pack = packFile(cacheDir, path.dirname(file));
    execFileSync("mkfifo", [pack]);
    mkdirSync(path.dirname(keyFile), { recursive: true, mode: 0o700 });
    execFileSync("mkfifo", [keyFile]);
    const { modules: loader } = await fresh();
    expect((await loader.importModule(file)).origin).toBe("real");
    await flushed();
    expect(statSync(pack).isFile()).toBe(true);
    expect(statSync(keyFile).isFile()).toBe(true);
  });
});

describe("pruning", () => {
  it("deletes entries unused for 30 days and temp files left for an hour, at most once a day, and nothing else", () => {
    const dir = path.join(cacheDir, "modules");
    mkdirSync(dir, { mode: 0o700 });
    const now = Date.now();
    const entry = (name: string, ageMs: number) => {
      const file = path.join(dir, name);
      writeFileSync(file, "x");
      utimesSync(file, new Date(now - ageMs), new Date(now - ageMs));
      return file;
    };
    const name = (digit: string, rest: string) => `${digit.repeat(64)}${rest}`;
    const old = entry(name("a", ".pack"), 31 * DAY);
    const oldShort = entry(`${"a".repeat(16)}.code`, 31 * DAY); // today's names: 16 hex digits
    const oldSpec = entry(name("b", ".json"), 31 * DAY);
    const recent = entry(name("c", ".ok"), 20 * DAY);
    const staleTemp = entry(name("d", ".pack.123.0123456789ab.tmp"), 2 * 60 * 60 * 1000);
    const newTemp = entry(name("e", ".pack.124.0123456789ab.tmp"), 60 * 1000);
    const notOurs = entry("id_rsa", 400 * DAY); // a cache folder pointed elsewhere must not cost a file
    pruneCacheFolder(dir, now);
    expect([old, oldShort, oldSpec, recent, staleTemp, newTemp, notOurs].map(existsSync)).toEqual([false, false, false, true, false, true, true]);
    const later = entry(name("f", ".pack"), 40 * DAY);
    pruneCacheFolder(dir, now + 60 * 60 * 1000); // within a day: not again
    expect(existsSync(later)).toBe(true);
    pruneCacheFolder(dir, now + 2 * DAY);
    expect(existsSync(later)).toBe(false);
    expect(existsSync(recent)).toBe(true);
  });

  it("a pack in use is kept fresh; an unused one is deleted when the cache is next written", async () => {
    const used = source("used/t.ts", 'export const v: number = 1;\n');
    const first = await fresh();
    await first.modules.importModule(used);
    await flushed();
    const modules = path.join(cacheDir, "modules");
    const [usedPack] = readdirSync(modules).filter((n) => n.endsWith(".pack"));
    const longAgo = new Date(Date.now() - 40 * DAY);
    utimesSync(path.join(modules, usedPack), longAgo, longAgo);
    writeFileSync(path.join(modules, `${"0".repeat(64)}.pack`), "yiem-modules-5\n"); // an old format's name, still pruned
    utimesSync(path.join(modules, `${"0".repeat(64)}.pack`), longAgo, longAgo);
    rmSync(path.join(cacheDir, ".pruned-modules"), { force: true });

    const second = await fresh();
    await second.modules.importModule(used); // reading the pack marks it used
    await second.modules.importModule(source("other/t.ts", "export const w: number = 2;\n")); // a write prunes
    await flushed();
    const left = readdirSync(modules);
    expect(left).toContain(usedPack);
    expect(left).not.toContain(`${"0".repeat(64)}.pack`);
    expect(Date.now() - statSync(path.join(modules, usedPack)).mtimeMs).toBeLessThan(DAY);
  });

  it("a pack drops the entries of source files that no longer exist when it is next written", async () => {
    const a = source("gone/a.ts", "export const a: number = 1;\n");
    const b = source("gone/b.ts", "export const b: number = 2;\n");
    const first = await fresh();
    await first.modules.importModule(a);
    await first.modules.importModule(b);
    await flushed();
    rmSync(b);
    const second = await fresh();
    await second.modules.importModule(source("gone/c.ts", "export const c: number = 3;\n"));
    await flushed();
    const modules = path.join(cacheDir, "modules");
    const [pack] = readdirSync(modules).filter((n) => n.endsWith(".pack"));
    const header = JSON.parse(readFileSync(path.join(modules, pack), "utf8").split("\n")[2]) as Array<[string]>;
    expect(header.map(([file]) => path.basename(file)).sort()).toEqual(["a.ts", "c.ts"]);
  });

  it("spec entries unused for 30 days are deleted when a spec is next cached", async () => {
    const specs = path.join(cacheDir, "specs");
    mkdirSync(specs, { mode: 0o700 });
    const stale = path.join(specs, `${"f".repeat(64)}.json`);
    writeFileSync(stale, "{}");
    const longAgo = new Date(Date.now() - 40 * DAY);
    utimesSync(stale, longAgo, longAgo);
    const load = specProject("fresh");
    const { config } = await fresh();
    expect((await load(config)).name).toBe("fresh");
    expect(existsSync(stale)).toBe(false);
    expect(readdirSync(specs).length).toBeGreaterThan(0);
  });
});
