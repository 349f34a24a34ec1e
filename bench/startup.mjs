/**
 * Start-up benchmarks: each command's median wall time as a ratio to that of `node -e 0`, measured
 * in the same alternating runs, both arms without the variables that change Node's own start-up
 * (`cleanEnv` in lib/measure.mjs; `--keep-startup-env` measures with them, for comparison):
 * - `yiem --version`;
 * - `yiem tools list` and `yiem config` in the repository root (its agent.config.yaml and the
 *   example tools in tools/), after warm-up runs, so the module and spec caches are warm;
 * - a one-turn `yiem run` against a local scripted Chat Completions server (bench/lib/chat-server.mjs,
 *   in this process) that answers with text at once, the spec loading one tool;
 * - the README's offline replay run (`yiem run --model replay:configs/demo.replay.jsonl …` in the
 *   repository root: two turns, the getTime and listTools tools).
 * A row over its budget gets a note naming where the command's time goes, from CPU profiles
 * (lib/profile.mjs), and how much of it is at most page faults (`pageFaultNote`). One row for
 * scale each, without a budget: `yiem tools list` with the V8 code cache of the bundle removed
 * before every run (the first start after an install or a build: src/code-cache.ts compiles, then
 * writes the cache), its spec and module caches warm; and `yiem config` with every cache removed
 * before every run (a fresh CI machine).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { alternate, freshPageCostUs, median, runOnce } from "./lib/measure.mjs";
import { startChatServer } from "./lib/chat-server.mjs";
import { writeSpec } from "./lib/fixtures.mjs";
import { formatProfile, profileCommand } from "./lib/profile.mjs";
import { NODE, REPO, yiem, yiemEnv } from "./lib/yiem.mjs";
import { limitRow, ms, ratioRow } from "./lib/table.mjs";

/** The budgets of issue 26, as ratios to `node -e 0`. */
export const STARTUP_BUDGETS = { version: 1.1, toolsList: 2, config: 2, oneTurn: 3.5, replay: 5 };

export async function benchStartup(ctx) {
  const env = yiemEnv(ctx.cacheDir);
  const bare = async () => (await runOnce([NODE, "-e", "0"], { cwd: REPO })).ms;
  const server = await startChatServer(() => ({ content: "hello from the bench server" }));
  const spec = writeSpec(ctx.ws, "one-turn.yaml", { baseURL: server.url, toolDir: ctx.dirs.noop });
  /** name, budget, argv, run options, and a check of the output. */
  const cases = [
    ["yiem --version vs node -e 0", STARTUP_BUDGETS.version, yiem("--version"), { cwd: REPO, env }, (r) => /^\d+\.\d+\.\d+\n$/.test(r.stdout)],
    ["yiem tools list (repo tools, warm) vs node -e 0", STARTUP_BUDGETS.toolsList, yiem("tools", "list"), { cwd: REPO, env },
      (r) => /\bgetTime\b/.test(r.stdout) && /\bgetWeather\b/.test(r.stdout)],
    ["yiem config (repo spec, warm) vs node -e 0", STARTUP_BUDGETS.config, yiem("config"), { cwd: REPO, env }, (r) => /^name: weather-assistant$/m.test(r.stdout)],
    ["yiem run, one turn against a local server vs node -e 0", STARTUP_BUDGETS.oneTurn, yiem("run", "-c", spec, "hi"), { cwd: ctx.ws.root, env },
      (r) => r.stdout === "hello from the bench server\n"],
    ["yiem run, the README's replay run vs node -e 0", STARTUP_BUDGETS.replay,
      yiem("run", "--model", "replay:configs/demo.replay.jsonl", "What time is it in Tokyo?"), { cwd: REPO, env },
      (r) => /According to the getTime tool, it is now: /.test(r.stdout)],
  ];
  const rows = [];
  try {
    for (const [name, budget, argv, options, check] of cases) {
      const sample = async () => {
        const r = await runOnce(argv, options);
        if (!check(r)) throw new Error(`${argv.slice(2).join(" ")} printed:\n${r.stdout}${r.stderr.slice(-2000)}`);
        return r.ms;
      };
      const times = await alternate(bare, sample, { runs: ctx.runs, warmup: 2 });
      const row = ratioRow(name, median(times.baseline), median(times.measured), budget);
      if (!row.pass) row.note = `${formatProfile(await profileCommand(argv, options))}; ${await pageFaultNote(argv, options, median(times.measured) - median(times.baseline))}`;
      rows.push(row);
    }
    rows.push(...(await coldRows(ctx, bare)));
  } finally {
    await server.close();
  }
  return rows;
}

/**
 * The part of a command's time over `node -e 0` that is page faults: the minor faults of each
 * (GNU time, median of 3 runs) times what one costs on this machine, measured in this run
 * (freshPageCostUs). An upper bound: a fault on a page of a file already in memory costs less
 * than a fresh one, and a worker thread's faults happen on another core.
 */
async function pageFaultNote(argv, options, overMs) {
  const faultsOf = async (command, opts) => {
    const counts = [];
    for (let i = 0; i < 3; i++) counts.push((await runOnce(command, { ...opts, memory: true })).minorFaults);
    return median(counts);
  };
  const baseline = await faultsOf([NODE, "-e", "0"], { cwd: REPO });
  const command = await faultsOf(argv, options);
  const costUs = freshPageCostUs();
  const extra = command - baseline;
  const faultMs = (extra * costUs) / 1000;
  if (extra <= 0) return `page faults ${command.toLocaleString("en")}, no more than node -e 0's ${baseline.toLocaleString("en")}`;
  return `page faults ${command.toLocaleString("en")} against node -e 0's ${baseline.toLocaleString("en")} (+${extra.toLocaleString("en")}); a fresh page costs ${costUs.toFixed(1)} µs on this machine (measured in this run), so up to ${faultMs.toFixed(0)} ms of the ${overMs.toFixed(0)} ms over node -e 0 is the kernel giving the process fresh memory`;
}

/**
 * The rows for scale (see the header): `tools list` with the code cache of the bundle removed
 * before every run (its spec and module caches warm), and `config` with the whole cache folder
 * removed before every run (the first start on a fresh CI machine: no code cache, no spec cache,
 * so the spec is checked with the validator compiled at build time, src/config/validate.ts).
 */
async function coldRows(ctx, bare) {
  const cases = [
    ["yiem tools list, code cache cold (first start after a build) vs node -e 0", yiem("tools", "list"), "code", (r) => /\bgetTime\b/.test(r.stdout)],
    ["yiem config, every cache cold (a fresh CI machine) vs node -e 0", yiem("config"), "", (r) => /^name: weather-assistant$/m.test(r.stdout)],
  ];
  const rows = [];
  for (const [name, argv, folder, check] of cases) {
    const cacheDir = `${ctx.cacheDir}-cold-${folder || "all"}`;
    const options = { cwd: REPO, env: yiemEnv(cacheDir) };
    const sample = async () => {
      rmSync(join(cacheDir, folder), { recursive: true, force: true });
      const r = await runOnce(argv, options);
      if (!check(r)) throw new Error(`${argv.slice(2).join(" ")} printed:\n${r.stdout}${r.stderr.slice(-2000)}`);
      return r.ms;
    };
    const times = await alternate(bare, sample, { runs: ctx.runs, warmup: 2 });
    const baseline = median(times.baseline);
    const measured = median(times.measured);
    rows.push(limitRow(name, ms(baseline), ms(measured), `${(measured / baseline).toFixed(2)}×`, "—", null));
  }
  return rows;
}
