/**
 * Event stream: the `spam` tool reports 100,000 partial results in one call; stderr goes to a
 * file. Every run must hold exactly 100,000 toolExecutionUpdate lines, every line JSON, `seq`
 * without gaps; the whole run (process wall time) must take ≤ 2 s. Baseline for scale: the same
 * run with 0 partial results.
 */
import { alternate, median, runOnce } from "./lib/measure.mjs";
import { startChatServer, toolResultCount } from "./lib/chat-server.mjs";
import { writeSpec } from "./lib/fixtures.mjs";
import { yiem, yiemEnv } from "./lib/yiem.mjs";
import { limitRow, ms } from "./lib/table.mjs";

const PARTIALS = 100_000;

function spamScript(body) {
  const prompt = body.messages.find((m) => m.role === "user")?.content ?? "";
  const count = Number(/partials: (\d+)/.exec(prompt)?.[1] ?? 0);
  if (toolResultCount(body) > 0) return { content: "done" };
  return { toolCalls: [{ id: "call_1", name: "spam", arguments: JSON.stringify({ count }) }] };
}

/** Checks the NDJSON stream: every line an event, seq 1..n without gaps; returns the update count. */
function countUpdates(stderr) {
  const lines = stderr.trimEnd().split("\n");
  let updates = 0;
  lines.forEach((line, i) => {
    const event = JSON.parse(line);
    if (event.seq !== i + 1) throw new Error(`line ${i + 1} has seq ${event.seq}`);
    if (event.type === "toolExecutionUpdate") updates++;
  });
  if (JSON.parse(lines[lines.length - 1]).type !== "agentEnd") throw new Error("the stream does not end with agentEnd");
  return updates;
}

export async function benchEvents(ctx) {
  const server = await startChatServer(spamScript);
  try {
    const spec = writeSpec(ctx.ws, "events.yaml", { baseURL: server.url, toolDir: ctx.dirs.spam });
    const env = yiemEnv(ctx.cacheDir);
    const errFile = ctx.ws.path("events-stderr.ndjson");
    let lost = 0;
    const run = async (count) => {
      const r = await runOnce(yiem("run", "-c", spec, "--events", "ndjson", `partials: ${count}`), { cwd: ctx.ws.root, env, stderrFile: errFile });
      const updates = countUpdates(r.stderr);
      lost += Math.abs(count - updates);
      return r.ms;
    };
    const { baseline, measured } = await alternate(() => run(0), () => run(PARTIALS), { runs: ctx.runs, warmup: 1 });
    const m = median(measured);
    return [limitRow(
      `event stream: ${PARTIALS.toLocaleString("en")} partial results, stderr to a file`,
      `0 partials ${ms(median(baseline))}`,
      ms(m),
      `${lost === 0 ? "no loss" : `${lost} lost`}, ${ms(m)}`,
      "no loss, ≤ 2 s",
      lost === 0 && m <= 2000,
    )];
  } finally {
    await server.close();
  }
}
