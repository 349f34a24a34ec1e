/**
 * 500 generated .ts tools: `yiem tools list --tool-dir DIR` with a cold cache (a fresh, empty
 * YIEM_CACHE_DIR per run) and with a warm one (the same folder, filled by an earlier run).
 * Absolute limits; `node -e 0` is shown for scale.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { alternate, median, runOnce } from "./lib/measure.mjs";
import { NODE, yiem, yiemEnv } from "./lib/yiem.mjs";
import { limitRow, ms } from "./lib/table.mjs";

const TOOL_COUNT = 500;

export async function benchManyTools(ctx) {
  const list = async (cacheDir) => {
    const r = await runOnce(yiem("tools", "list", "--tool-dir", ctx.dirs.many), { cwd: ctx.ws.root, env: yiemEnv(cacheDir) });
    const listed = r.stdout.split("\n").filter((line) => /^tool\d{3}\t/.test(line)).length;
    if (listed !== TOOL_COUNT) throw new Error(`tools list printed ${listed} generated tools, expected ${TOOL_COUNT}\n${r.stderr.slice(-2000)}`);
    return r.ms;
  };
  const bare = async () => (await runOnce([NODE, "-e", "0"])).ms;
  const cold = await alternate(bare, async () => {
    const cacheDir = mkdtempSync(ctx.ws.path("cold-cache-"));
    try {
      return await list(cacheDir);
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  }, { runs: ctx.runs, warmup: 0 });
  const warmDir = ctx.ws.path("warm-cache-500");
  await list(warmDir);
  const warm = await alternate(bare, () => list(warmDir), { runs: ctx.runs, warmup: 1 });
  const coldMs = median(cold.measured);
  const warmMs = median(warm.measured);
  return [
    limitRow(`${TOOL_COUNT} .ts tools: tools list, cold cache`, `node -e 0 ${ms(median(cold.baseline))}`, ms(coldMs), ms(coldMs), "≤ 3 s", coldMs <= 3000),
    limitRow(`${TOOL_COUNT} .ts tools: tools list, warm cache`, `node -e 0 ${ms(median(warm.baseline))}`, ms(warmMs), ms(warmMs), "≤ 0.35 s", warmMs <= 350),
  ];
}
