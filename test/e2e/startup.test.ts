/**
 * Start-up rule (docs/performance.md): `yiem --version` and `yiem --help` (and a command's
 * `--help`) load only what argument parsing needs — never openai, execa, ajv, ajv-formats or sucrase (the tool transformer).
 * The real binary runs with a preload that records every module the process loads: ES modules
 * through a resolve hook (module.register), CommonJS through Module._load, and the bundles
 * src/code-cache.ts compiles itself through vm.Script. The CLI runs from the bundle (dist/bundle/,
 * scripts/bundle.mjs): yiem's code in yiem.cjs, those packages in vendor bundles of their own:
 * dist/bundle/manifest.json names the packages and sources in each file, so a loaded bundle counts
 * as loading every package bundled into it. No timings here: those are benchmarks (`npm run bench`).
 */
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, yiemBin } from "../support/cli.js";
import { reply, startChatServer } from "../support/chat-server.js";

const HEAVY = ["openai", "execa", "ajv", "ajv-formats", "sucrase", "@modelcontextprotocol/client", "@modelcontextprotocol/server", "@modelcontextprotocol/core", "zod"];

const HOOKS = `import { appendFileSync } from "node:fs";
let out;
export function initialize(data) { out = data.out; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(out, "esm " + result.url + "\\n");
  return result;
}
`;

const PRELOAD = `import { appendFileSync } from "node:fs";
import Module, { register } from "node:module";
import vm from "node:vm";
const out = process.env.TRACE_MODULES_FILE;
register(new URL("./hooks.mjs", import.meta.url), { data: { out } });
const Script = vm.Script;
vm.Script = class extends Script {
  constructor(code, options) {
    super(code, options);
    appendFileSync(out, "vm  " + options?.filename + "\\n");
  }
};
const load = Module._load;
Module._load = function (request, parent, isMain) {
  let resolved = request;
  try { resolved = Module._resolveFilename(request, parent, isMain); } catch {}
  appendFileSync(out, "cjs " + resolved + "\\n");
  return load.apply(this, arguments);
};
`;

/**
 * A preload that writes the built-ins loaded (process.moduleLoadList) to $BUILTINS_FILE as the
 * process ends: in process.reallyExit (wrapped before yiem loads) for an exit by process.exit,
 * on 'beforeExit' for a process whose event loop ran dry. Not with an 'exit' listener: a
 * listener that is not yiem's makes the exit bound start its thread (src/exit-listeners.ts),
 * which loads worker_threads.
 */
const BUILTINS_PRELOAD = [
  'const write = () => require("node:fs").writeFileSync(process.env.BUILTINS_FILE, process.moduleLoadList.join("\\n"));',
  "const reallyExit = process.reallyExit;",
  "process.reallyExit = function (code) { write(); return reallyExit.call(process, code); };",
  'process.on("beforeExit", write);',
  "",
].join("\n");

interface Manifest {
  files: Record<string, { packages: string[]; sources: string[]; staticImports: string[] }>;
}
const manifest = JSON.parse(readFileSync(join(repoRoot, "dist", "bundle", "manifest.json"), "utf8")) as Manifest;

/** The bundle's files among `modules` (paths relative to dist/bundle/), each checked to be in the manifest. */
function bundleFiles(modules: string[]): string[] {
  const files = new Set<string>();
  for (const m of modules) {
    const match = /[\\/]dist[\\/]bundle[\\/](.+)$/.exec(m.replace(/^file:\/\//, ""));
    if (!match) continue;
    const file = match[1].replaceAll("\\", "/");
    if (!(file in manifest.files)) throw new Error(`${file} is not in dist/bundle/manifest.json: rebuild`);
    files.add(file);
  }
  return [...files];
}

/** `file` and every file it imports statically, transitively: what loading it loads. */
function staticClosure(file: string): Set<string> {
  const seen = new Set<string>();
  const visit = (f: string) => {
    if (seen.has(f)) return;
    seen.add(f);
    for (const next of manifest.files[f].staticImports) visit(next);
  };
  visit(file);
  return seen;
}

let dir: string;
let preload: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "yiem-startup-"));
  writeFileSync(join(dir, "hooks.mjs"), HOOKS);
  preload = join(dir, "preload.mjs");
  writeFileSync(preload, PRELOAD);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

let traceCount = 0;

/** Runs `yiem ...args` with the module tracer; returns its output and the loaded modules. */
function traced(args: string[]) {
  const file = join(dir, `trace-${++traceCount}.txt`);
  writeFileSync(file, "");
  const result = spawnSync(process.execPath, ["--import", pathToFileURL(preload).href, yiemBin, ...args], {
    cwd: repoRoot,
    env: { ...process.env, TRACE_MODULES_FILE: file, NO_COLOR: "1" },
    encoding: "utf8",
    timeout: 20_000,
  });
  const modules = readFileSync(file, "utf8").split("\n").filter(Boolean).map((line) => line.slice(4));
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, modules };
}

/** The heavy packages among `modules`: by their node_modules folder, or bundled into a loaded bundle file. */
function heavyPackages(modules: string[]): string[] {
  const found = new Set<string>();
  for (const m of modules) {
    const match = /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/.exec(m);
    if (match && HEAVY.includes(match[1])) found.add(match[1]);
  }
  for (const file of bundleFiles(modules)) for (const pkg of manifest.files[file].packages) if (HEAVY.includes(pkg)) found.add(pkg);
  return [...found].sort();
}

/** The packages among `modules`: by their node_modules folder, or bundled into a loaded bundle file. */
function packagesOf(modules: string[]): string[] {
  const found = new Set(modules.map((m) => /node_modules[\\/]([^\\/]+)[\\/]/.exec(m)?.[1]).filter((p): p is string => !!p));
  for (const file of bundleFiles(modules)) for (const pkg of manifest.files[file].packages) found.add(pkg);
  return [...found];
}

describe("start-up loads only what argument parsing needs", () => {
  it("--version prints the version without loading any package", () => {
    const run = traced(["--version"]);
    expect(run.code).toBe(0);
    const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string };
    expect(run.stdout).toBe(`${pkg.version}\n`);
    // The tracer works: it saw the entry, which answers before loading any of dist/.
    expect(run.modules.some((m) => m.includes("bin/yiem.js"))).toBe(true);
    expect(run.modules.filter((m) => /[\\/]dist[\\/]/.test(m))).toEqual([]);
    expect(packagesOf(run.modules)).toEqual([]);
  });

  it("--version to a reader that is gone (EPIPE): exit 0, nothing on stderr", () => {
    // The subshell closes the pipe's only read end before yiem writes to it.
    const script = `${JSON.stringify(process.execPath)} ${JSON.stringify(yiemBin)} --version | (exec 0<&-; sleep 0.5); echo "exit=\${PIPESTATUS[0]}" >&2`;
    const result = spawnSync("bash", ["-c", script], { cwd: repoRoot, encoding: "utf8", timeout: 20_000 });
    expect(result.stderr).toBe("exit=0\n");
  });

  it("-V is the same fast path", () => {
    const run = traced(["-V"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect(packagesOf(run.modules)).toEqual([]);
  });

  it.each([{ args: ["--help"] }, { args: ["run", "--help"] }, { args: ["tools", "--help"] }, { args: ["tools", "list", "--help"] }, { args: ["mcp", "serve", "--help"] }, { args: ["batch", "--help"] }, { args: ["batch", "merge", "--help"] }])(
    "$args loads yargs but not openai, execa, ajv or sucrase",
    ({ args }) => {
      const run = traced(args);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("yiem");
      expect(packagesOf(run.modules)).toContain("yargs");
      expect(heavyPackages(run.modules)).toEqual([]);
    },
  );

  it.each([{ args: ["--help"] }, { args: ["run", "--help"] }, { args: ["tools", "list", "--help"] }])("$args loads no vendor bundle: only yiem.cjs and the loader it requires", ({ args }) => {
    const run = traced(args);
    expect(run.code).toBe(0);
    const loaded = bundleFiles(run.modules);
    expect(loaded).toContain("yiem.cjs");
    const eager = staticClosure("yiem.cjs");
    expect([...eager].sort()).toEqual(["start.cjs", "yiem.cjs"]);
    expect(loaded.filter((file) => !eager.has(file))).toEqual([]);
    // The start-up bundle holds none of the packages split off into vendor bundles.
    const inStartup = [...eager].flatMap((file) => manifest.files[file].packages);
    expect(inStartup.filter((p) => HEAVY.includes(p) || p === "yaml" || p === "openai")).toEqual([]);
  });

  it.each([{ args: ["tools", "list"] }, { args: ["config"] }, { args: ["run", "--dry-run", "hello"] }])("$args without MCP servers never loads the MCP SDK", ({ args }) => {
    const run = traced(args);
    expect(run.code, run.stderr).toBe(0);
    expect(run.modules.some((m) => m.includes("@modelcontextprotocol"))).toBe(false);
    expect(run.modules.some((m) => /[\\/]dist[\\/]mcp[\\/]/.test(m))).toBe(false);
    const loaded = bundleFiles(run.modules);
    expect(loaded).toContain("yiem.cjs");
    expect(loaded.filter((file) => file.startsWith("vendor/mcp-"))).toEqual([]);
    expect(loaded.filter((file) => manifest.files[file].packages.some((p) => p.startsWith("@modelcontextprotocol/")))).toEqual([]);
  });

  it("the tracer sees a package when a command uses it (the replay run validates tool arguments with ajv; config prints YAML)", () => {
    const run = traced(["run", "--model", "replay:configs/demo.replay.jsonl", "What time is it in Tokyo?"]);
    expect(run.code, run.stderr).toBe(0);
    expect(heavyPackages(run.modules)).toContain("ajv");
    expect(heavyPackages(run.modules)).not.toContain("openai");
    const config = traced(["config"]);
    expect(config.code, config.stderr).toBe(0);
    expect(bundleFiles(config.modules)).toContain("vendor/yaml.cjs");
    expect(packagesOf(config.modules)).toContain("yaml");
  });

  it("the tracer sees heavy packages when they are loaded (ESM import and CommonJS require)", () => {
    const file = join(dir, "trace-self-check.txt");
    writeFileSync(file, "");
    const script = 'await import("openai"); (await import("node:module")).createRequire(process.cwd() + "/")("ajv");';
    const result = spawnSync(process.execPath, ["--import", pathToFileURL(preload).href, "--input-type=module", "-e", script], {
      cwd: repoRoot,
      env: { ...process.env, TRACE_MODULES_FILE: file },
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(result.status).toBe(0);
    const modules = readFileSync(file, "utf8").split("\n").filter(Boolean);
    expect(modules.some((m) => m.startsWith("esm ") && m.includes("node_modules/openai/"))).toBe(true);
    expect(modules.some((m) => m.startsWith("cjs ") && m.includes("node_modules/ajv/"))).toBe(true);
    expect(heavyPackages(modules.map((m) => m.slice(4)))).toEqual(["ajv", "openai"]);
  });
});

/**
 * Node's own modules a start-up compiles beyond `node -e 0` cost it too (~70 of them for
 * `tools list`). These three groups are loaded only by what uses them: worker_threads by the run
 * watchdog, perf_hooks (the global `performance`) by a run's clock, util's parseArgs and MIME
 * (the whole `node:util`) by nothing on these paths. A CommonJS preload (no module hooks: those
 * start a worker thread themselves) writes `process.moduleLoadList` at exit.
 */
describe("start-up compiles only the Node modules the command uses", () => {
  const NOT_AT_START = [
    "NativeModule worker_threads",
    "NativeModule internal/perf/performance",
    "NativeModule internal/util/parse_args/parse_args",
    // yargs' two checks of its own state use a stand-in (scripts/bundle.mjs, YARGS_ASSERT)
    "NativeModule assert",
  ];

  function builtinsLoaded(args: string[], stdin: "pipe" | "ignore" | number = "pipe", place: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): { code: number | null; stderr: string; loaded: string[] } {
    const out = join(dir, `builtins-${++traceCount}.txt`);
    const preloadCjs = join(dir, "builtins.cjs");
    writeFileSync(preloadCjs, BUILTINS_PRELOAD);
    const result = spawnSync(process.execPath, ["-r", preloadCjs, yiemBin, ...args], {
      cwd: place.cwd ?? repoRoot,
      env: { ...process.env, BUILTINS_FILE: out, NO_COLOR: "1", ...place.env },
      encoding: "utf8",
      stdio: [stdin, "pipe", "pipe"],
      timeout: 20_000,
    });
    return { code: result.status, stderr: result.stderr, loaded: readFileSync(out, "utf8").split("\n") };
  }

  it.each([{ args: ["tools", "list"] }, { args: ["config"] }, { args: ["--help"] }])("$args loads neither worker_threads, perf_hooks nor util's parseArgs", ({ args }) => {
    const run = builtinsLoaded(args);
    expect(run.code, run.stderr).toBe(0);
    expect(run.loaded).toContain("NativeModule vm"); // the list is real: the loader's vm.Script
    expect(run.loaded.filter((m) => NOT_AT_START.includes(m))).toEqual([]);
  });

  // With an owned cache (the package's own folder here) a warm start signs and hashes nothing:
  // node:crypto and its ~20 modules are not compiled; nor is fs/promises (with readline and the
  // fs watchers): yiem's imports of both load them on first use (scripts/bundle.mjs, LAZY_BUILTINS).
  const WARM_NOT_AT_START = ["NativeModule crypto", "NativeModule fs/promises", "NativeModule internal/readline/interface"];

  it.each([{ args: ["tools", "list"] }, { args: ["config"] }])("a warm $args loads neither node:crypto nor fs/promises", ({ args }) => {
    for (let i = 0; i < 2; i++) expect(builtinsLoaded(args).code).toBe(0); // warm: code cache, packs, specs
    const run = builtinsLoaded(args);
    expect(run.code, run.stderr).toBe(0);
    expect(run.loaded.filter((m) => WARM_NOT_AT_START.includes(m))).toEqual([]);
  });

  // stdout and stderr are written to their descriptors until something needs the streams
  // (src/cli/host/fd-output.ts): on a Node parent's pipes (sockets, as here) a warm tools list or
  // config, whose output is one write under 2 KB, builds neither, so net, tty and Node's stream
  // modules stay unloaded. (--help's 3 KB go through the stream on a socket.)
  const STREAMS = ["NativeModule stream", "NativeModule net", "NativeModule tty", "NativeModule internal/streams/writable"];

  it.each([{ args: ["tools", "list"] }, { args: ["config"] }])("$args with stdout and stderr on pipes loads no stream, net or tty module", ({ args }) => {
    for (let i = 0; i < 2; i++) expect(builtinsLoaded(args).code).toBe(0);
    const run = builtinsLoaded(args);
    expect(run.code, run.stderr).toBe(0);
    expect(run.loaded.filter((m) => STREAMS.includes(m))).toEqual([]);
  });

  it("the check sees the stream modules where a stream is built (a replay run writes its events through process.stderr)", () => {
    const run = builtinsLoaded(["run", "--model", "replay:configs/demo.replay.jsonl", "What time is it in Tokyo?"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.loaded).toContain("NativeModule stream");
  });

  // A run's id and its temp names come from /dev/urandom (src/random-id.ts), and its attachments
  // are read only when there are some: a run loads neither either.
  it("a warm replay run with stdin on /dev/null loads neither node:crypto, fs/promises nor node:tty", () => {
    const args = ["run", "--model", "replay:configs/demo.replay.jsonl", "What time is it in Tokyo?"];
    for (let i = 0; i < 2; i++) expect(builtinsLoaded(args, "ignore").code).toBe(0);
    const run = builtinsLoaded(args, "ignore");
    expect(run.code, run.stderr).toBe(0);
    expect(run.loaded).toContain("NativeModule vm");
    expect(run.loaded.filter((m) => [...WARM_NOT_AT_START, "NativeModule tty"].includes(m))).toEqual([]);
  });

  it("the check sees node:crypto where it is loaded (a cache folder inside a project is signed)", () => {
    const project = join(dir, "signed-project");
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, "package.json"), "{}\n");
    const run = builtinsLoaded(["tools", "list"], "pipe", { cwd: project, env: { YIEM_CACHE_DIR: join(project, ".cache") } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.loaded).toContain("NativeModule crypto");
  });

  it("tools list with stdin on /dev/null (cron, CI) never builds process.stdin: no file read stream", () => {
    const run = builtinsLoaded(["tools", "list"], "ignore");
    expect(run.code, run.stderr).toBe(0);
    expect(run.loaded).toContain("NativeModule vm");
    expect(run.loaded.filter((m) => m === "NativeModule internal/fs/streams")).toEqual([]);
  });

  it("a replay run with stdin on /dev/null never builds process.stdin either (nothing there to read)", () => {
    const run = builtinsLoaded(["run", "--model", "replay:configs/demo.replay.jsonl", "What time is it in Tokyo?"], "ignore");
    expect(run.code, run.stderr).toBe(0);
    expect(run.loaded.filter((m) => m === "NativeModule internal/fs/streams")).toEqual([]);
  });

  it("the check sees a file read stream where stdin is built (run reads its prompt from a file as stdin)", () => {
    const prompt = join(dir, "prompt.txt");
    writeFileSync(prompt, "What time is it in Tokyo?\n");
    const fd = openSync(prompt, "r");
    try {
      const run = builtinsLoaded(["run", "--model", "replay:configs/demo.replay.jsonl"], fd);
      expect(run.code, run.stderr).toBe(0);
      expect(run.loaded).toContain("NativeModule internal/fs/streams");
    } finally {
      closeSync(fd);
    }
  });

  it("--version writes to fd 1 without building process.stdout: no stream or net module", () => {
    const run = builtinsLoaded(["--version"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.loaded.filter((m) => ["NativeModule stream", "NativeModule net", "NativeModule internal/streams/writable"].includes(m))).toEqual([]);
  });

  /** Like `builtinsLoaded`, without blocking this process (a server in it answers meanwhile). */
  async function builtinsLoadedAsync(argv: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string; loaded: string[] }> {
    const out = join(dir, `builtins-${++traceCount}.txt`);
    const preloadCjs = join(dir, "builtins.cjs");
    writeFileSync(preloadCjs, BUILTINS_PRELOAD);
    const child = spawn(process.execPath, ["-r", preloadCjs, ...argv], { cwd, env: { ...process.env, ...env, BUILTINS_FILE: out, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    return { code, stdout, stderr, loaded: readFileSync(out, "utf8").split("\n") };
  }

  const UNDICI = "NativeModule internal/deps/undici/undici";

  it("a one-turn run against a server never loads Node's fetch (undici): the model client's fetch is node:http (src/provider/http/)", async () => {
    const server = await startChatServer([reply.stream({ content: "hello over http" })]);
    const work = mkdtempSync(join(tmpdir(), "yiem-startup-run-"));
    try {
      writeFileSync(join(work, "agent.yaml"), `name: t\nmodel:\n  name: m\n  baseURL: ${server.url}\n`);
      const run = await builtinsLoadedAsync([yiemBin, "run", "-c", "agent.yaml", "hi"], work, { OPENAI_API_KEY: "sk-test" });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe("hello over http\n");
      expect(run.loaded).toContain("NativeModule http");
      // (zlib is loaded anyway: the code cache's CRC, src/code-cache.ts)
      expect(run.loaded.filter((m) => m === UNDICI || m === "NativeModule http2")).toEqual([]);
    } finally {
      await server.close();
      rmSync(work, { recursive: true, force: true });
    }
  });

  it("the check sees undici where it is loaded (a script that makes a Headers)", async () => {
    const script = join(dir, "headers.cjs");
    writeFileSync(script, "new Headers();\n");
    const run = await builtinsLoadedAsync([script], dir, {});
    expect(run.code, run.stderr).toBe(0);
    expect(run.loaded).toContain(UNDICI);
  });

  it("a run with a timeout that loads tools arms the watchdog: worker_threads is loaded then (the check sees it)", () => {
    const run = builtinsLoaded(["run", "--model", "replay:configs/demo.replay.jsonl", "--timeout", "60s", "What time is it in Tokyo?"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.loaded).toContain("NativeModule worker_threads");
    expect(run.loaded).toContain("NativeModule internal/perf/performance");
  });
});

/**
 * A worker thread is a Node bootstrap of its own. The run watchdog and the exit bound share one
 * thread (src/cli/host/watchdog.ts): a run that armed the watchdog and then the exit bound starts
 * one; the exit bound alone starts it only when more than yiem's own code could run before the
 * exit (src/cli/bounded-exit.ts). A CommonJS preload counts the Worker constructions made through
 * process.getBuiltinModule (how the watchdog takes worker_threads), writing the count at each one:
 * an 'exit' listener of its own would be one that is not yiem's, for which the bound starts it.
 */
describe("a run starts one worker thread for its watchdog and its exit bound", () => {
  const COUNTER = `const fs = require("node:fs");
let count = 0;
const get = process.getBuiltinModule;
process.getBuiltinModule = function (id) {
  const m = get.call(process, id);
  if (id !== "node:worker_threads" && id !== "worker_threads") return m;
  return { ...m, Worker: class extends m.Worker { constructor(...args) { super(...args); fs.writeFileSync(process.env.WORKERS_FILE, String(++count)); } } };
};
`;

  /**
   * `args` run with the counter; stderr to a file when `stderrFile` is given, else a pipe; with
   * `exitListener`, the preload also listens to the process's 'exit'.
   */
  function workersStarted(args: string[], stderrFile?: string, exitListener = false): { code: number | null; stderr: string; workers: number } {
    const out = join(dir, `workers-${++traceCount}.txt`);
    const counter = join(dir, `count-workers-${exitListener}.cjs`);
    writeFileSync(counter, exitListener ? `${COUNTER}process.on("exit", () => {});\n` : COUNTER);
    const errFd = stderrFile === undefined ? undefined : openSync(stderrFile, "w");
    try {
      const result = spawnSync(process.execPath, ["-r", counter, yiemBin, ...args], {
        cwd: repoRoot,
        env: { ...process.env, WORKERS_FILE: out, NO_COLOR: "1" },
        encoding: "utf8",
        stdio: ["pipe", "pipe", errFd ?? "pipe"],
        timeout: 20_000,
      });
      const stderr = stderrFile === undefined ? result.stderr : readFileSync(stderrFile, "utf8");
      return { code: result.status, stderr, workers: existsSync(out) ? Number(readFileSync(out, "utf8")) : 0 };
    } finally {
      if (errFd !== undefined) closeSync(errFd);
    }
  }

  const REPLAY = ["run", "--model", "replay:configs/demo.replay.jsonl"];

  it("the replay run with a timeout (watchdog armed, then the exit bound): one thread", () => {
    const run = workersStarted([...REPLAY, "--timeout", "60s", "What time is it in Tokyo?"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.workers).toBe(1);
  });

  it("a run without a timeout whose events a file took at once exits with no thread", () => {
    const run = workersStarted([...REPLAY, "--timeout", "0", "What time is it in Tokyo?"], join(dir, `events-${traceCount}.ndjson`));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('"type":"agentEnd"');
    expect(run.workers).toBe(0);
  });

  it("the counter sees a thread where the exit bound starts one: an 'exit' listener that is not yiem's (the preload's)", () => {
    const run = workersStarted([...REPLAY, "--timeout", "0", "What time is it in Tokyo?"], join(dir, `events-${traceCount}.ndjson`), true);
    expect(run.code, run.stderr).toBe(0);
    expect(run.workers).toBe(1);
  });

  it("tools list starts none", () => {
    const run = workersStarted(["tools", "list"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.workers).toBe(0);
  });
});
