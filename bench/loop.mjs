/**
 * Loop overhead and memory. A local server answers instantly: the prompt "round trips: N" makes it
 * call the trivial `noop` tool until the conversation holds N tool results, then answer "done".
 * Real HTTP with streaming (the default a spec gets, and what real servers are used with).
 *
 * - overhead per round trip = median over alternating pairs of (T(200) − T(0)) / 200, minus the raw
 *   round trip: the same server answering the very request bodies yiem sent, posted in order with
 *   plain fetch from a child process. T(0) (one request, no tool) cancels start-up and tool
 *   loading, so what remains is what yiem adds per round trip (SSE parsing, events, validation,
 *   execution, building the next request).
 * - The bodies are recorded first; then every round runs T(0), T(200) and the raw replay one after
 *   the other, so a change in the machine's load hits all three alike (on a shared 2-core machine
 *   a raw figure taken minutes apart from the yiem runs moves the difference by a millisecond).
 * - memory: the max RSS of the 200-round-trip runs (GNU time's %M), median.
 */
import { writeFileSync } from "node:fs";
import { median, runOnce } from "./lib/measure.mjs";
import { startChatServer, toolResultCount } from "./lib/chat-server.mjs";
import { writeSpec } from "./lib/fixtures.mjs";
import { agentEndOf, NODE, yiem, yiemEnv } from "./lib/yiem.mjs";
import { limitRow, ms } from "./lib/table.mjs";

export const ROUND_TRIPS = 200;

/**
 * `runs` rounds of the given samplers (each a () => Promise<number>), one after the other in every
 * round, after `warmup` unmeasured rounds. Returns one array of samples per sampler.
 */
async function alternate(samplers, { runs, warmup = 1 }) {
  for (let i = 0; i < warmup; i++) for (const sample of samplers) await sample();
  const samples = samplers.map(() => []);
  for (let i = 0; i < runs; i++) for (const [j, sample] of samplers.entries()) samples[j].push(await sample());
  return samples;
}

function roundTripScript(body) {
  const prompt = body.messages.find((m) => m.role === "user")?.content ?? "";
  const target = Number(/round trips: (\d+)/.exec(prompt)?.[1] ?? 0);
  const done = toolResultCount(body);
  if (done >= target) return { content: "done" };
  return { toolCalls: [{ id: `call_${done + 1}`, name: "noop", arguments: JSON.stringify({ i: done + 1 }) }] };
}

export async function benchLoop(ctx) {
  const server = await startChatServer(roundTripScript);
  const spec = writeSpec(ctx.ws, "loop.yaml", { baseURL: server.url, toolDir: ctx.dirs.noop });
  const env = yiemEnv(ctx.cacheDir);
  const errFile = ctx.ws.path("loop-stderr.ndjson");
  const rss = [];
  const run = async (n) => {
    const r = await runOnce(yiem("run", "-c", spec, `round trips: ${n}`), { cwd: ctx.ws.root, env, stderrFile: errFile, memory: n > 0 });
    const end = agentEndOf(r.stderr);
    if (r.stdout.trim() !== "done" || end.toolCalls !== n || end.stopReason !== "completed") {
      throw new Error(`round trips ${n}: stdout ${JSON.stringify(r.stdout)}, agentEnd ${JSON.stringify(end)}`);
    }
    if (r.maxRssKb !== null) rss.push(r.maxRssKb);
    return r.ms;
  };
  try {
    // The raw round trip replays the bodies of one recorded run.
    const recorder = await startChatServer(roundTripScript, { record: true });
    const recSpec = writeSpec(ctx.ws, "loop-record.yaml", { baseURL: recorder.url, toolDir: ctx.dirs.noop });
    await runOnce(yiem("run", "-c", recSpec, `round trips: ${ROUND_TRIPS}`), { cwd: ctx.ws.root, env, stderrFile: errFile });
    await recorder.close();
    const bodiesFile = ctx.ws.path("loop-bodies.json");
    writeFileSync(bodiesFile, JSON.stringify(recorder.bodies));
    if (recorder.bodies.length !== ROUND_TRIPS + 1) throw new Error(`recorded ${recorder.bodies.length} requests, expected ${ROUND_TRIPS + 1}`);
    const rawOnce = async () => {
      const r = await runOnce([NODE, new URL("./lib/raw-client.mjs", import.meta.url).pathname, server.url, bodiesFile]);
      return JSON.parse(r.stdout).msPerRequest;
    };

    const rounds = await alternate([() => run(0), () => run(ROUND_TRIPS), rawOnce], { runs: ctx.runs, warmup: 1 });
    const [baseline, measured, raw] = rounds;
    const perTrip = measured.map((t, i) => (t - baseline[i]) / ROUND_TRIPS);
    const rawMs = median(raw);
    const yiemMs = median(perTrip);
    const overhead = yiemMs - rawMs;
    const rows = [
      limitRow(
        `loop overhead per tool round trip (${ROUND_TRIPS}, streaming HTTP)`,
        `raw fetch ${ms(rawMs)}`,
        `yiem ${ms(yiemMs)}`,
        `${overhead < 0 ? "−" : "+"}${ms(Math.abs(overhead))}`,
        "≤ 1 ms",
        overhead <= 1,
      ),
    ];
    const mb = median(rss) / 1024;
    rows.push(limitRow(`max RSS of a ${ROUND_TRIPS}-round-trip run`, "—", `${mb.toFixed(1)} MB`, `${mb.toFixed(1)} MB`, "≤ 100 MB", mb <= 100));
    return rows;
  } finally {
    await server.close();
  }
}
