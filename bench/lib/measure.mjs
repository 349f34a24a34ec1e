/**
 * Timing helpers for the benchmarks. Rules:
 * - a process is timed from spawn to exit (wall clock, `performance.now()`), its output captured
 *   or sent to a file, never to the terminal;
 * - the baseline and the measured command alternate run by run, so load on the machine hits both;
 * - a failed run (non-zero exit, unless allowed) stops the benchmark with its stderr tail;
 * - max RSS and minor page faults come from GNU time (`/usr/bin/time -f "%M %R"`) when present,
 *   else (for a node command) from `process.resourceUsage()` reported at exit by the
 *   report-rss.mjs preload; a live process's from /proc (`procMemory`);
 * - `freshPageCostUs` measures what a page fault costs on this machine, in this run: the time
 *   that figure explains is a product of the two, never a guess;
 * - every child starts from `cleanEnv()`: the caller's environment without the variables that
 *   change Node's own start-up (see `NODE_STARTUP_VARIABLES`), in both arms of every comparison.
 */
import { spawn } from "node:child_process";
import { existsSync, openSync, closeSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const GNU_TIME = "/usr/bin/time";
export const hasGnuTime = existsSync(GNU_TIME) && !process.env.YIEM_BENCH_NO_GNU_TIME;
const REPORT_RSS = new URL("./report-rss.mjs", import.meta.url).href;

/**
 * Variables that change what every Node process does before running any code: `NODE_*` (e.g.
 * `NODE_EXTRA_CA_CERTS` makes Node 20 read and parse a CA bundle first, ~30 ms; `NODE_OPTIONS`
 * can add flags and preloads; `NODE_COMPILE_CACHE`, `NODE_V8_COVERAGE`, `NODE_PATH`), OpenSSL's
 * configuration and the libuv thread pool size. A user's machine usually sets none of them, and
 * they add the same fixed cost to both arms, which hides the cost of yiem in every ratio.
 */
export const NODE_STARTUP_VARIABLES = [/^NODE_/, /^OPENSSL_CONF$/, /^OPENSSL_MODULES$/, /^SSL_CERT_(FILE|DIR)$/, /^UV_THREADPOOL_SIZE$/];

/** The variables of `env` (default: this process's) that `cleanEnv` removes, by name. */
export function startupVariablesIn(env = process.env) {
  return Object.keys(env).filter((key) => NODE_STARTUP_VARIABLES.some((pattern) => pattern.test(key))).sort();
}

let keepStartupVariables = false;

/** Keep the start-up variables in every child from now on (`--keep-startup-env`, for comparison). */
export function keepStartupEnv() {
  keepStartupVariables = true;
}

/** The environment children start from: this process's, without the start-up variables (unless kept). */
export function cleanEnv() {
  const env = { ...process.env, ...keptVariables };
  if (keepStartupVariables) return env;
  for (const key of startupVariablesIn(env)) delete env[key];
  return env;
}

/**
 * The start-up variables of the caller's environment, taken out of this process's own
 * environment by `stripStartupEnv` so that children yiem itself spawns (MCP servers, command
 * tools) start clean too; `--keep-startup-env` puts them back into every child.
 */
let keptVariables = {};

/** Removes the start-up variables from this process's environment; returns their names. */
export function stripStartupEnv() {
  const names = startupVariablesIn();
  for (const key of names) {
    keptVariables[key] = process.env[key];
    delete process.env[key];
  }
  return names;
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Runs `argv` once. Options: cwd, env (merged into `cleanEnv()`; a variable set to undefined is
 * removed), stderrFile (stderr goes there
 * instead of being captured), stdin ("ignore" by default), memory (wrap in /usr/bin/time to read
 * the max RSS and the minor page faults), okCodes (default [0]).
 * Returns { ms, code, stdout, stderr, maxRssKb, minorFaults } (the last two null without `memory`).
 */
export function runOnce(argv, options = {}) {
  const rssFile = options.memory ? join(tmpdir(), `yiem-bench-rss-${process.pid}-${Math.random().toString(36).slice(2)}`) : null;
  let command = argv;
  let env = { ...cleanEnv(), ...options.env };
  if (rssFile && hasGnuTime) command = [GNU_TIME, "-f", "%M %R", "-o", rssFile, ...argv];
  else if (rssFile && argv[0] === process.execPath) {
    command = [argv[0], "--import", REPORT_RSS, ...argv.slice(1)];
    env = { ...env, YIEM_BENCH_RSS_FILE: rssFile };
  } else if (rssFile) throw new Error("cannot measure memory: no /usr/bin/time and not a node command");
  const errFd = options.stderrFile ? openSync(options.stderrFile, "w") : null;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command[0], command.slice(1), {
      cwd: options.cwd,
      env,
      stdio: [options.stdin ?? "ignore", "pipe", errFd ?? "pipe"],
    });
    const out = [];
    const err = [];
    child.stdout.on("data", (d) => out.push(d));
    child.stderr?.on("data", (d) => err.push(d));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - started;
      if (errFd !== null) closeSync(errFd);
      const stdout = Buffer.concat(out).toString("utf8");
      const stderr = options.stderrFile ? readFileSync(options.stderrFile, "utf8") : Buffer.concat(err).toString("utf8");
      let maxRssKb = null;
      let minorFaults = null;
      if (rssFile) {
        [maxRssKb, minorFaults] = readFileSync(rssFile, "utf8").trim().split("\n").pop().split(" ").map(Number);
        rmSync(rssFile, { force: true });
      }
      if (!(options.okCodes ?? [0]).includes(code)) {
        reject(new Error(`${argv.join(" ")} exited ${code}\n${tail(stderr)}`));
        return;
      }
      resolve({ ms, code, stdout, stderr, maxRssKb, minorFaults });
    });
  });
}

/**
 * `runs` alternating runs of two commands (each a () => Promise<number> giving one sample), after
 * `warmup` unmeasured rounds. Returns { baseline: number[], measured: number[] }.
 */
export async function alternate(baselineSample, measuredSample, { runs, warmup = 1 }) {
  for (let i = 0; i < warmup; i++) {
    await baselineSample();
    await measuredSample();
  }
  const baseline = [];
  const measured = [];
  for (let i = 0; i < runs; i++) {
    baseline.push(await baselineSample());
    measured.push(await measuredSample());
  }
  return { baseline, measured };
}

function tail(text, lines = 15) {
  return text.trim().split("\n").slice(-lines).join("\n");
}

const PAGE_BYTES = 4096;

/**
 * What one minor page fault costs here, in µs: the kernel (and on a VM the hypervisor) giving the
 * process a fresh zeroed page on its first write. Writes 32 MiB of fresh memory twice (the first
 * write faults every page in, the second none) and divides the difference by the pages; the
 * median of 3, measured once per bench process (~0.3 s) and kept. On the 2-core VM of
 * docs/performance.md it is ~13 µs, many times a bare machine's.
 */
export function freshPageCostUs() {
  pageCostUs ??= measurePageCostUs();
  return pageCostUs;
}

let pageCostUs;

function measurePageCostUs() {
  const bytes = 32 * 1024 * 1024;
  const tries = [];
  for (let i = 0; i < 3; i++) {
    const memory = Buffer.allocUnsafeSlow(bytes);
    const first = performance.now();
    memory.fill(1);
    const second = performance.now();
    memory.fill(2);
    const done = performance.now();
    tries.push(((second - first - (done - second)) * 1000) / (bytes / PAGE_BYTES));
  }
  return Math.max(0, median(tries));
}

/** A live process's minor page faults and peak RSS (KiB) so far, from /proc (Linux); null when it cannot be read. */
export function procMemory(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces, in parentheses): state is field 3, minflt field 10.
    const minorFaults = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[7]);
    const peak = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return { minorFaults, peakRssKb: peak ? Number(peak[1]) : null };
  } catch {
    return null;
  }
}
