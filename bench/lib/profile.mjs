/**
 * Where a command's start-up time goes, from V8 CPU profiles (`node --cpu-prof`), for a benchmark
 * row whose budget is missed. Rules:
 * - the command runs `runs` times with `--cpu-prof` in a fresh folder; each profile's samples are
 *   summed by the self time of their function, then put in a bucket by the function's file:
 *   Node's module loader (`node:internal/modules/…`, resolving, reading and compiling modules),
 *   compiling Node's own built-in modules on first use, undici (behind `fetch`), other Node
 *   internals by module (streams, fs, …), a package (`node_modules/<name>`), yiem's own code (its dist/ or src/
 *   file), or V8's own `(garbage collector)` / `(program)` (work outside JavaScript functions,
 *   e.g. parsing and compiling);
 * - each bucket's figure is the median over the runs, in milliseconds; `(idle)` (waiting, e.g. for
 *   a child or a socket) is left out;
 * - the profile starts after Node's own bootstrap, which `node -e 0` (the baseline) also pays;
 * - only the main thread's profile counts (`CPU.<date>.<time>.<pid>.0.<n>.cpuprofile`): a run's
 *   watchdog or exit-bound worker writes a profile of its own, whose wait would otherwise be
 *   summed as work;
 *   that the worker was started is named (`workers`), since starting one costs a Node bootstrap;
 * - `beforeMain` is the CPU time sampled before yiem's `main` first runs: loading, compiling and
 *   evaluating the bundle's start-up files (with the Node modules they import); the rest is the
 *   command (parsing, the spec, the tools, chunks loaded on first use, the run, the exit). The
 *   bundle's local names are minified, so `main` is found through its source map (`isMainFrame`);
 *   `mainFound` says whether a sample fell inside it (on a loaded machine a short command's run
 *   may have none, and then every sample counts as loading).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { SourceMap } from "node:module";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { median, runOnce } from "./measure.mjs";

/**
 * The sampling interval (µs). Node's default, 1 ms, gives a 15 ms command a dozen samples, and on a
 * busy machine sometimes none after `main` starts.
 */
const SAMPLE_INTERVAL_US = 100;

/** The bucket a profile node's call frame belongs to. */
export function bucketOf(url, functionName) {
  if (!url) {
    if (functionName === "(garbage collector)") return "V8: garbage collection";
    if (functionName === "(program)") return "V8: outside JS (parse, compile, native)";
    if (functionName === "(idle)") return null;
    return "V8/native";
  }
  if (/^node:internal\/modules\//.test(url)) return "Node: module loading (resolve, read, compile)";
  if (url.startsWith("node:internal/deps/undici")) return "Node: undici (fetch)";
  if (url === "node:internal/bootstrap/realm") return "Node: compiling its own built-in modules";
  if (url.startsWith("node:")) return `Node: ${url.replace(/^node:(internal\/)?/, "").split("/")[0]}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return `package ${pkg[1]}`;
  const own = /\/(dist|src)\/(.+?)(?:\?.*)?$/.exec(url);
  // Bundled files by name (a handful), tsc's output by folder (dozens of small files).
  if (own) return `yiem ${own[1]}/${own[2].startsWith("bundle/") ? own[2] : own[2].replace(/\/[^/]+$/, "/")}`;
  // Anything else by its last two path segments (a tool file, e.g. tools/getTime.ts).
  return `file ${url.replace(/^file:\/\//, "").split("/").slice(-2).join("/")}`;
}

/** Source maps of the bundle files seen in profiles, by URL (null: none could be read). */
const sourceMaps = new Map();

/** Whether a call frame is yiem's `main` (src/cli/main.ts), by name or, in the minified bundle, by its source map. */
export function isMainFrame(frame) {
  if (!/\/dist\/bundle\/(?:cli\.js|yiem\.cjs)$/.test(frame.url ?? "")) return false;
  if (frame.functionName === "main") return true;
  if (!sourceMaps.has(frame.url)) {
    let map = null;
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(frame.url)}.map`, "utf8")));
    } catch {
      // no map: the frame is judged by its name only
    }
    sourceMaps.set(frame.url, map);
  }
  const entry = sourceMaps.get(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber);
  return entry?.name === "main" && /(?:^|\/)src\/cli\/main\.ts$/.test(entry.originalSource ?? "");
}

/** Self time (ms) per bucket of one `.cpuprofile`, and the profile's total (ms, idle excluded). */
export function summarizeProfile(profile) {
  const nodeById = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const buckets = new Map();
  let total = 0;
  let beforeMain = 0;
  let mainStarted = false;
  const parentOf = new Map();
  for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
  const underMain = new Map();
  const isUnderMain = (id) => {
    if (underMain.has(id)) return underMain.get(id);
    const frame = nodeById.get(id)?.callFrame ?? {};
    const parent = parentOf.get(id);
    const result = isMainFrame(frame) || (parent !== undefined && isUnderMain(parent));
    underMain.set(id, result);
    return result;
  };
  for (const [id, us] of selfUs) {
    const frame = nodeById.get(id)?.callFrame ?? {};
    const bucket = bucketOf(frame.url, frame.functionName);
    if (bucket === null) continue;
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + us / 1000);
    total += us / 1000;
  }
  for (let i = 0; i < profile.samples.length && !mainStarted; i++) {
    const id = profile.samples[i];
    mainStarted = isUnderMain(id);
    if (!mainStarted && nodeById.get(id)?.callFrame.functionName !== "(idle)") beforeMain += (profile.timeDeltas[i] ?? 0) / 1000;
  }
  return { total, beforeMain, mainFound: mainStarted, buckets };
}

/** Node's name for the main thread's profile (thread id 0). */
const MAIN_THREAD_PROFILE = /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/;

/**
 * Profiles `argv` (a node command: [node, script, ...args]) `runs` times; returns the median total
 * and the buckets sorted by their median, largest first: [{ bucket, ms }].
 */
export async function profileCommand(argv, options = {}, runs = 5) {
  const dir = mkdtempSync(join(tmpdir(), "yiem-bench-prof-"));
  try {
    const summaries = [];
    let workers = 0;
    for (let i = 0; i < runs; i++) {
      const runDir = join(dir, String(i));
      await runOnce([argv[0], "--cpu-prof", "--cpu-prof-interval", String(SAMPLE_INTERVAL_US), "--cpu-prof-dir", runDir, ...argv.slice(1)], options);
      const files = readdirSync(runDir);
      workers = Math.max(workers, files.filter((file) => !MAIN_THREAD_PROFILE.test(file)).length);
      for (const file of files.filter((f) => MAIN_THREAD_PROFILE.test(f))) summaries.push(summarizeProfile(JSON.parse(readFileSync(join(runDir, file), "utf8"))));
    }
    const names = new Set(summaries.flatMap((s) => [...s.buckets.keys()]));
    const buckets = [...names]
      .map((bucket) => ({ bucket, ms: median(summaries.map((s) => s.buckets.get(bucket) ?? 0)) }))
      .sort((a, b) => b.ms - a.ms);
    // Medians of each figure (their runs may differ); `mainFound`: whether any run sampled inside main.
    return { total: median(summaries.map((s) => s.total)), beforeMain: median(summaries.map((s) => s.beforeMain)), mainFound: summaries.some((s) => s.mainFound), workers, buckets };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One line: the profile's total and its largest buckets, e.g. "profile 41 ms: Node: module loading 12 ms, …". */
export function formatProfile({ total, beforeMain, workers = 0, buckets }, top = 6) {
  const parts = buckets.slice(0, top).map((b) => `${b.bucket} ${b.ms.toFixed(1)} ms`);
  const split = beforeMain === undefined ? "" : ` (loading the bundle until main runs ${beforeMain.toFixed(0)} ms, the command ${Math.max(0, total - beforeMain).toFixed(0)} ms)`;
  const worker = workers > 0 ? `; plus ${workers} worker thread${workers === 1 ? "" : "s"} started (the run watchdog, the exit bound: each a Node bootstrap of its own, not in these figures)` : "";
  return `CPU profile (median of runs, self time, main thread) ${total.toFixed(0)} ms${split}: ${parts.join(", ")}${worker}`;
}
