/**
 * MCP benchmarks (issue 21), in this process against dist/:
 * - per-call overhead: `echo` of the reference server over stdio, called N times in a row through
 *   yiem's path (argument preparation, executeToolCall with its timeout and events, the MCP tool
 *   adapter, result mapping, yiem's own stdio transport) against the SDK's own Client with its
 *   StdioClientTransport calling it directly; single calls alternate, medians; budget ≤ 1 ms more;
 * - parallel start: four fixture servers whose handshake takes 200, 400, 600 and 800 ms connect
 *   through startMcp in at most the slowest one alone + 50 ms (alternating, medians).
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { alternate, median } from "./lib/measure.mjs";
import { REPO } from "./lib/yiem.mjs";
import { limitRow, ms, ratioRow as ratioRowOf } from "./lib/table.mjs";

const CALLS = 200;
const EVERYTHING = join(REPO, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const FIXTURE = join(REPO, "test", "fixtures", "mcp", "server.mjs");
const dist = (p) => import(pathToFileURL(join(REPO, "dist", p)).href);

function server(name, command, extra = {}) {
  return {
    name, definedIn: null, transport: "stdio", command, cwd: REPO, env: {}, required: true,
    startupTimeoutMs: 30_000, toolTimeoutMs: 120_000, tools: { allow: ["*"], deny: [] }, ...extra,
  };
}

export async function benchMcp(ctx) {
  const [{ Client }, { StdioClientTransport }] = await Promise.all([import("@modelcontextprotocol/client"), import("@modelcontextprotocol/client/stdio")]);
  const [{ startMcp }, { ToolRegistry }, { executeToolCall }, { prepareArguments }] = await Promise.all([
    dist("mcp/session.js"), dist("tools/registry.js"), dist("loop/execute.js"), dist("loop/prepare.js"),
  ]);

  // ---- per-call overhead ----
  const sdkClient = new Client({ name: "bench", version: "0" });
  await sdkClient.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, "stdio"], stderr: "ignore" }));
  const registry = new ToolRegistry();
  const session = await startMcp([server("everything", [process.execPath, EVERYTHING, "stdio"])], registry, { clientVersion: "bench" });
  const tool = registry.get("mcp__everything__echo");
  const signal = new AbortController().signal;
  const args = JSON.stringify({ message: "hello" });
  let id = 0;
  const viaSdk = async () => {
    const started = performance.now();
    const r = await sdkClient.callTool({ name: "echo", arguments: { message: "hello" } });
    if (r.content[0].text !== "Echo: hello") throw new Error("sdk echo failed");
    return performance.now() - started;
  };
  const viaYiem = async () => {
    const started = performance.now();
    const toolCall = { id: `c${++id}`, name: tool.name, arguments: args };
    const prepared = await prepareArguments(tool, args);
    const done = await executeToolCall({ toolCall, tool, args: prepared.args }, { turn: 1, signal, hooks: {}, emit: () => {}, toolTimeoutMs: 120_000 });
    if (done.isError || done.result.content[0].text !== "Echo: hello") throw new Error(`yiem echo failed: ${JSON.stringify(done.result)}`);
    return performance.now() - started;
  };
  const rows = [];
  try {
    // Call by call, alternating, so a load spike hits both sides; medians of the single calls.
    const { baseline, measured } = await alternate(viaSdk, viaYiem, { runs: CALLS * Math.max(1, Math.min(ctx.runs, 5)), warmup: 50 });
    const b = median(baseline);
    const m = median(measured);
    rows.push(limitRow(`mcp: one call to everything's echo over stdio, yiem vs the SDK client (median of ${baseline.length})`, ms(b), ms(m), `${m - b >= 0 ? "+" : "−"}${Math.abs(m - b).toFixed(2)} ms`, "≤ +1 ms", m - b <= 1));
  } finally {
    await sdkClient.close();
    await session.close();
  }

  // ---- four servers in parallel ----
  const delayed = (name, delay) => server(name, [process.execPath, FIXTURE, "ok"], { env: { FIXTURE_DELAY_MS: String(delay) } });
  const connectAll = async (servers) => {
    const started = performance.now();
    const s = await startMcp(servers, new ToolRegistry(), { clientVersion: "bench" });
    const elapsed = performance.now() - started;
    await s.close();
    return elapsed;
  };
  const { baseline: slowest, measured: four } = await alternate(
    () => connectAll([delayed("slowest", 800)]),
    () => connectAll([delayed("a", 200), delayed("b", 400), delayed("c", 600), delayed("slowest", 800)]),
    { runs: Math.max(5, Math.min(ctx.runs, 9)), warmup: 1 },
  );
  const s = median(slowest);
  const f = median(four);
  rows.push(limitRow("mcp: 4 stdio servers (handshakes of 200–800 ms) connect vs the slowest alone", ms(s), ms(f), `+${(f - s).toFixed(0)} ms`, "≤ +50 ms", f - s <= 50));
  // For scale: the same four one after another (what a sequential start would cost).
  const oneByOne = [];
  for (let i = 0; i < 3; i++) {
    let total = 0;
    for (const [name, delay] of [["a", 200], ["b", 400], ["c", 600], ["slowest", 800]]) total += await connectAll([delayed(name, delay)]);
    oneByOne.push(total);
  }
  rows.push(ratioRowOf("mcp: the 4 servers in parallel vs one after another", median(oneByOne), f, 0.6));
  return rows;
}
