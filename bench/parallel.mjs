/**
 * Parallel mode: the server asks for "parallel calls: N" calls to the `sleep` tool (500 ms each) in
 * one turn, then answers "done". Compared: the run's own duration (agentEnd.durationMs, so process
 * start-up is not counted) with 8 calls against the same with 1 call, alternating.
 */
import { alternate, median, runOnce } from "./lib/measure.mjs";
import { startChatServer, toolResultCount } from "./lib/chat-server.mjs";
import { writeSpec } from "./lib/fixtures.mjs";
import { agentEndOf, yiem, yiemEnv } from "./lib/yiem.mjs";
import { ratioRow } from "./lib/table.mjs";

const SLEEP_MS = 500;

function parallelScript(body) {
  const prompt = body.messages.find((m) => m.role === "user")?.content ?? "";
  const calls = Number(/parallel calls: (\d+)/.exec(prompt)?.[1] ?? 0);
  if (toolResultCount(body) > 0) return { content: "done" };
  return { toolCalls: Array.from({ length: calls }, (_, i) => ({ id: `call_${i + 1}`, name: "sleep", arguments: JSON.stringify({ ms: SLEEP_MS, tag: i + 1 }) })) };
}

export async function benchParallel(ctx) {
  const server = await startChatServer(parallelScript);
  try {
    const spec = writeSpec(ctx.ws, "parallel.yaml", { baseURL: server.url, toolDir: ctx.dirs.sleep, toolExecution: "parallel" });
    const env = yiemEnv(ctx.cacheDir);
    const errFile = ctx.ws.path("parallel-stderr.ndjson");
    const run = async (calls) => {
      const r = await runOnce(yiem("run", "-c", spec, `parallel calls: ${calls}`), { cwd: ctx.ws.root, env, stderrFile: errFile });
      const end = agentEndOf(r.stderr);
      if (r.stdout.trim() !== "done" || end.toolCalls !== calls) throw new Error(`parallel ${calls}: agentEnd ${JSON.stringify(end)}`);
      return end.durationMs;
    };
    const { baseline, measured } = await alternate(() => run(1), () => run(8), { runs: ctx.runs, warmup: 1 });
    return [ratioRow(`parallel: 8 calls of a ${SLEEP_MS} ms tool vs 1 call (run duration)`, median(baseline), median(measured), 1.2)];
  } finally {
    await server.close();
  }
}
