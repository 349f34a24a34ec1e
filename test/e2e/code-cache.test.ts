/**
 * The V8 code cache of the bundle (src/code-cache.ts, docs/performance.md "The code cache"), seen
 * from the real binary: a CommonJS preload records, for every bundle file compiled through
 * vm.Script, whether cached data was given and whether V8 rejected it. The cache is written after
 * the command, used by the next start, checked by its checksum (an edited entry is never given to
 * V8), signed with the per-user key in a cache inside a project (a planted entry is never given
 * to V8 there), rewritten when V8 rejects it or it is torn; each command has entries of its own.
 * No timings here (bench/startup.mjs measures them).
 */
import { spawn, spawnSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { checksum } from "../../src/checksum.js";
import { baseEnv, repoRoot, yiemBin } from "../support/cli.js";
import { reply, startChatServer } from "../support/chat-server.js";

const RECORDER = `const vm = require("node:vm");
const fs = require("node:fs");
const Script = vm.Script;
const seen = [];
vm.Script = class extends Script {
  constructor(code, options) {
    super(code, options);
    if (/[\\\\/]dist[\\\\/]bundle[\\\\/]/.test(options?.filename ?? "")) seen.push({ file: options.filename.replace(/^.*[\\\\/]dist[\\\\/]bundle[\\\\/]/, ""), cached: Boolean(options.cachedData), rejected: this.cachedDataRejected === true });
  }
};
process.on("exit", () => fs.writeFileSync(process.env.SCRIPTS_FILE, JSON.stringify(seen)));
`;

let dir: string;
let cacheDir: string;
/** XDG_CACHE_HOME of every run: where the key of a signed cache is kept. */
let userCache: string;
let recorder: string;
let count = 0;

interface Compiled {
  file: string;
  cached: boolean;
  rejected: boolean;
}

/** The spawn of `yiem ...args` in the repository with the recorder, and the file it records the compiled bundles in. */
function yiemCommand(args: string[], env: Record<string, string> = {}) {
  const out = join(dir, `scripts-${++count}.json`);
  const options = { cwd: repoRoot, env: baseEnv({ YIEM_CACHE_DIR: cacheDir, XDG_CACHE_HOME: userCache, SCRIPTS_FILE: out, NO_COLOR: "1", ...env }) };
  return { argv: ["-r", recorder, yiemBin, ...args], options, compiled: () => JSON.parse(readFileSync(out, "utf8")) as Compiled[] };
}

/** Runs `yiem ...args` in the repository with the recorder; returns its output and the bundle files it compiled. */
function yiem(args: string[]): { code: number | null; stdout: string; stderr: string; compiled: Compiled[] } {
  const command = yiemCommand(args);
  const result = spawnSync(process.execPath, command.argv, { ...command.options, encoding: "utf8", timeout: 30_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, compiled: command.compiled() };
}

/** As `yiem`, without blocking this process (a model server in it must answer). */
function yiemAsync(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string; compiled: Compiled[] }> {
  const command = yiemCommand(args, env);
  const child = spawn(process.execPath, command.argv, { ...command.options, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d));
  child.stderr.on("data", (d: Buffer) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr, compiled: command.compiled() }));
  });
}

const bundle = (run: { compiled: Compiled[] }) => run.compiled.find((c) => c.file === "yiem.cjs");
const entries = () => readdirSync(join(cacheDir, "code")).filter((name) => name.endsWith(".code")).map((name) => join(cacheDir, "code", name));

/** The entry of yiem.cjs for `command`: the largest whose key names it (the vendor entries are smaller). */
function bundleEntry(command = "tools"): string {
  return entries()
    .filter((file) => header(file)[3]?.endsWith(`,${command}`))
    .sort((a, b) => statSync(b).size - statSync(a).size)[0];
}

function header(file: string): string[] {
  const bytes = readFileSync(file);
  return bytes.subarray(0, bytes.indexOf(0x0a)).toString("latin1").split(" ");
}

/** An entry for `file`'s name with `data` and its checksum, standing for the key of the entry there now, signed with `key` the way src/code-cache.ts signs (null: unsigned, as in an owned cache). */
function entryOf(file: string, data: Buffer, key: Buffer | null, standsFor = header(file)[3]): Buffer {
  const name = file.slice(file.lastIndexOf("/") + 1);
  let signature = "-";
  if (key) {
    const hmac = createHmac("sha256", key);
    for (const part of ["yiem-code-cache-3", name, standsFor]) hmac.update(part).update("\0");
    signature = hmac.update(data).update("\0").digest("hex");
  }
  return Buffer.concat([Buffer.from(`yiem-code-cache-3 ${signature} ${checksum(data)} ${standsFor}\n`), data]);
}

/** Makes the next runs use a signed cache: a cache folder inside a checkout, the key in the user cache folder. */
function useSignedCache(): void {
  const project = mkdtempSync(join(dir, "project-"));
  mkdirSync(join(project, ".git"));
  cacheDir = join(project, "cache");
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "yiem-code-cache-"));
  recorder = join(dir, "recorder.cjs");
  writeFileSync(recorder, RECORDER);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  cacheDir = mkdtempSync(join(dir, "cache-"));
  userCache = mkdtempSync(join(dir, "user-"));
});

describe("the bundle's code cache", () => {
  it("is written after the first command and given to V8 by the next start, which accepts it", () => {
    const first = yiem(["tools", "list"]);
    expect(first.code, first.stderr).toBe(0);
    expect(bundle(first)).toEqual({ file: "yiem.cjs", cached: false, rejected: false });
    expect(header(bundleEntry())[1]).toBe("-"); // an owned cache: unsigned
    expect(header(bundleEntry())).toHaveLength(4);
    expect(header(bundleEntry())[3]).toMatch(new RegExp(`^[0-9a-f]{64},${process.version.replace(/\./g, "\\.")},${process.arch},tools$`)); // what it stands for
    const second = yiem(["tools", "list"]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(bundle(second)).toEqual({ file: "yiem.cjs", cached: true, rejected: false });
  });

  it("a cold start checks the spec with the validator compiled at build time: ajv never compiles the schema", () => {
    const cold = yiem(["config"]);
    expect(cold.code, cold.stderr).toBe(0);
    expect(cold.compiled.map((c) => c.file)).toContain("vendor/spec-validator.cjs");
    expect(cold.compiled.map((c) => c.file)).not.toContain("vendor/ajv.cjs");
    // A bad spec's problems come from that validator, worded as ever (file, line, key, nearest name).
    const spec = join(dir, "bad.yaml");
    writeFileSync(spec, "name: bad\nmodel:\n  name: m\n  temprature: 1\nlimits:\n  maxTurns: zero\n");
    const bad = yiem(["config", "-c", spec]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('bad.yaml:4: unknown key "temprature" in "model" (did you mean "temperature"?)');
    expect(bad.stderr).toContain('bad.yaml:6: "limits.maxTurns" must be an integer >= 1 (got "zero")');
    expect(bad.compiled.map((c) => c.file)).not.toContain("vendor/ajv.cjs");
  });

  it("a vendor bundle has an entry of its own (config prints YAML through vendor/yaml.cjs)", () => {
    expect(yiem(["config"]).code).toBe(0);
    const warm = yiem(["config"]);
    expect(warm.code, warm.stderr).toBe(0);
    expect(warm.compiled).toContainEqual({ file: "vendor/yaml.cjs", cached: true, rejected: false });
  });

  it("every command has entries of its own (V8 reads all of one); a command's next start leaves its entry alone", () => {
    expect(yiem(["tools", "list"]).code).toBe(0);
    const tools = bundleEntry("tools");
    const written = statSync(tools).mtimeMs;
    const config = yiem(["config"]);
    expect(config.code, config.stderr).toBe(0);
    expect(bundle(config)).toEqual({ file: "yiem.cjs", cached: false, rejected: false });
    const configEntry = bundleEntry("config");
    expect(configEntry).not.toBe(tools);
    expect(bundle(yiem(["config"]))).toEqual({ file: "yiem.cjs", cached: true, rejected: false });
    expect(bundle(yiem(["tools", "list"]))).toEqual({ file: "yiem.cjs", cached: true, rejected: false });
    expect(statSync(tools).mtimeMs).toBe(written);
    // A first word that is no command name shares the entries of "other".
    expect(yiem(["--help"]).code).toBe(0);
    expect(bundleEntry("other")).toBeDefined();
  });

  it("an edited entry (its checksum no longer matches) is never given to V8, and is rewritten", () => {
    expect(yiem(["tools", "list"]).code).toBe(0);
    const entry = bundleEntry();
    const bytes = readFileSync(entry);
    bytes[bytes.length - 100] ^= 0xff;
    writeFileSync(entry, bytes);
    const edited = yiem(["tools", "list"]);
    expect(edited.code, edited.stderr).toBe(0);
    expect(edited.stdout).toMatch(/\bgetTime\b/);
    expect(bundle(edited)).toEqual({ file: "yiem.cjs", cached: false, rejected: false });
    expect(bundle(yiem(["tools", "list"]))).toEqual({ file: "yiem.cjs", cached: true, rejected: false });
  });

  it("an entry that stands for something else (another Node version in its key) is never given to V8, and is rewritten", () => {
    expect(yiem(["tools", "list"]).code).toBe(0);
    const entry = bundleEntry();
    const bytes = readFileSync(entry);
    const data = bytes.subarray(bytes.indexOf(0x0a) + 1);
    writeFileSync(entry, entryOf(entry, data, null, header(entry)[3].replace(process.version, "v99.0.0")));
    const other = yiem(["tools", "list"]);
    expect(other.code, other.stderr).toBe(0);
    expect(bundle(other)).toEqual({ file: "yiem.cjs", cached: false, rejected: false });
    expect(bundle(yiem(["tools", "list"]))).toEqual({ file: "yiem.cjs", cached: true, rejected: false });
  });

  it("in a cache inside a project, entries are signed and one planted unsigned or signed with another key is never given to V8", () => {
    useSignedCache();
    const first = yiem(["tools", "list"]);
    expect(first.code, first.stderr).toBe(0);
    const entry = bundleEntry();
    expect(header(entry)[1]).toMatch(/^[0-9a-f]{64}$/);
    expect(bundle(yiem(["tools", "list"]))).toEqual({ file: "yiem.cjs", cached: true, rejected: false });
    const data = readFileSync(entry).subarray(readFileSync(entry).indexOf(0x0a) + 1);
    for (const key of [null, Buffer.alloc(32, 7)]) {
      writeFileSync(entry, entryOf(entry, data, key));
      const planted = yiem(["tools", "list"]);
      expect(planted.code, planted.stderr).toBe(0);
      expect(bundle(planted)?.cached).toBe(false);
    }
  });

  for (const signed of [false, true]) {
    it(`an entry V8 rejects (data of another script) is ignored and rewritten (${signed ? "signed" : "owned"} cache)`, () => {
      if (signed) useSignedCache();
      expect(yiem(["tools", "list"]).code).toBe(0);
      const entry = bundleEntry();
      const key = signed ? readFileSync(join(userCache, "yiem", "key")) : null;
      writeFileSync(entry, entryOf(entry, Buffer.alloc(4096, 1), key));
      const rejected = yiem(["tools", "list"]);
      expect(rejected.code, rejected.stderr).toBe(0);
      expect(rejected.stdout).toMatch(/\bgetTime\b/);
      expect(bundle(rejected)).toEqual({ file: "yiem.cjs", cached: true, rejected: true });
      expect(bundle(yiem(["tools", "list"]))).toEqual({ file: "yiem.cjs", cached: true, rejected: false });
    });
  }

  it("a run that started the watch thread leaves a cache the next run accepts", () => {
    const args = ["run", "--model", "replay:configs/demo.replay.jsonl", "--timeout", "60s", "What time is it in Tokyo?"];
    expect(yiem(args).code).toBe(0);
    const second = yiem(args);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/According to the getTime tool/);
    expect(bundle(second)).toEqual({ file: "yiem.cjs", cached: true, rejected: false });
    // ajv is loaded after the thread started.
    expect(second.compiled).toContainEqual({ file: "vendor/ajv.cjs", cached: true, rejected: false });
  });

  it("a run against a model server (no --timeout) leaves caches the next run accepts", async () => {
    // A request to a model server loads the openai bundle too; the caches are written after the
    // last event, where the exit bound may have started the watch thread.
    const server = await startChatServer(() => reply.json({ content: "hello" }));
    try {
      const spec = join(dir, "one-turn.yaml");
      writeFileSync(spec, `name: one-turn\nmodel:\n  name: m\n  baseURL: ${server.url}\n`);
      const args = ["run", "-c", spec, "--events", "none", "hi"];
      const first = await yiemAsync(args, { OPENAI_API_KEY: "sk-test-key" });
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toBe("hello\n");
      // Every bundle an earlier run compiled has a cache the next accepts. (ajv, which the run
      // loads ahead of a tool call while the request is in flight, may be loaded first by a later
      // run, when an earlier one's answer came before; its own cache is then written by that run.)
      const seen = new Set(first.compiled.map((c) => c.file));
      for (let i = 0; i < 2; i++) {
        const next = await yiemAsync(args, { OPENAI_API_KEY: "sk-test-key" });
        expect(next.code, next.stderr).toBe(0);
        expect(next.compiled.map((c) => c.file).sort()).toEqual(expect.arrayContaining(["vendor/openai.cjs", "yiem.cjs"]));
        for (const compiled of next.compiled) expect(compiled).toEqual({ file: compiled.file, cached: seen.has(compiled.file), rejected: false });
        for (const compiled of next.compiled) seen.add(compiled.file);
      }
    } finally {
      await server.close();
    }
  });

  it("--debug loads the bundle with require (source maps), without the cache", () => {
    expect(yiem(["tools", "list"]).code).toBe(0);
    const debug = yiem(["tools", "list", "--debug"]);
    expect(debug.code, debug.stderr).toBe(0);
    expect(debug.stdout).toMatch(/\bgetTime\b/);
    expect(bundle(debug)).toBeUndefined();
  });
});
