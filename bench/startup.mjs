/**
 * Start-up benchmarks: `yiem --version`, and `yiem tools list` with the repository's example tools
 * (cwd = repository root, so its agent.config.yaml and tools/ are used) on a warm cache, each as a
 * ratio of its median wall time to that of `node -e 0` measured in the same alternating runs.
 */
import { alternate, median, runOnce } from "./lib/measure.mjs";
import { NODE, REPO, yiem, yiemEnv } from "./lib/yiem.mjs";
import { ratioRow } from "./lib/table.mjs";

export async function benchStartup(ctx) {
  const env = yiemEnv(ctx.cacheDir);
  const bare = async () => (await runOnce([NODE, "-e", "0"], { cwd: REPO })).ms;

  const version = await alternate(bare, async () => {
    const r = await runOnce(yiem("--version"), { cwd: REPO, env });
    if (!/^\d+\.\d+\.\d+/.test(r.stdout)) throw new Error(`--version printed ${JSON.stringify(r.stdout)}`);
    return r.ms;
  }, { runs: ctx.runs, warmup: 2 });

  const list = await alternate(bare, async () => {
    const r = await runOnce(yiem("tools", "list"), { cwd: REPO, env });
    if (!/\bgetTime\b/.test(r.stdout) || !/\bgetWeather\b/.test(r.stdout)) throw new Error(`tools list printed:\n${r.stdout}${r.stderr}`);
    return r.ms;
  }, { runs: ctx.runs, warmup: 2 });

  return [
    ratioRow("yiem --version vs node -e 0", median(version.baseline), median(version.measured), 1.6),
    ratioRow("yiem tools list (example tools, warm) vs node -e 0", median(list.baseline), median(list.measured), 2.5),
  ];
}
