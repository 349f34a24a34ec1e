/**
 * MCP benchmarks (issue 21), in this process against dist/:
 * - per-call overhead: `echo` of the reference server over stdio, called N times in a row through
 *   yiem's path (argument preparation, executeToolCall with its timeout and events, the MCP tool
 *   adapter, result mapping, yiem's own stdio transport) against the SDK's own Client with its
 *   StdioClientTransport calling it directly; single calls alternate, medians; budget ≤ 1 ms more;
 * - parallel start: four fixture servers whose handshake takes 200, 400, 600 and 800 ms connect
 *   through startMcp in at most the time four bare clients (no SDK) take to start the same four
 *   together, + 50 ms (alternating, medians); also against the slowest server's own start inside
 *   the same start, and, for scale, the slowest alone and the four one after another.
 */
import { spawn } from "node:child_process";
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

/**
 * The baseline client: spawns the fixture server and speaks the handshake as bare JSON-RPC lines
 * (initialize, notifications/initialized, tools/list); resolves at the tools/list answer.
 */
function bareClient(delay, env) {
  return new Promise((resolve, reject) => {
    // Spawned as yiem spawns a server (its own process group, stderr piped, the same environment).
    const child = spawn(process.execPath, [FIXTURE, "ok"], { env: { ...env, FIXTURE_DELAY_MS: String(delay) }, stdio: ["pipe", "pipe", "pipe"], detached: true });
    child.stderr.resume();
    const send = (message) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    let pending = "";
    child.on("error", reject);
    child.stdout.on("data", (chunk) => {
      pending += chunk;
      let newline;
      while ((newline = pending.indexOf("\n")) >= 0) {
        const message = JSON.parse(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
        if (message.id === 1) {
          send({ method: "notifications/initialized" });
          send({ id: 2, method: "tools/list", params: {} });
        } else if (message.id === 2) {
          child.stdin.end();
          resolve();
        }
      }
    });
    send({ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } } });
  });
}

export async function benchMcp(ctx) {
  const [{ Client }, { StdioClientTransport }] = await Promise.all([import("@modelcontextprotocol/client"), import("@modelcontextprotocol/client/stdio")]);
  const [{ startMcp }, { ToolRegistry }, { executeToolCall }, { prepareArguments }, { childEnv }] = await Promise.all([
    dist("mcp/session.js"), dist("tools/registry.js"), dist("loop/execute.js"), dist("loop/prepare.js"), dist("tools/process.js"),
  ]);
  const env = childEnv();

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
  // Four Node processes starting at once on a small machine slow each other down, whoever
  // starts them. So the budget compares yiem with the floor of the same start: four bare clients
  // (plain spawn and hand-written JSON-RPC lines, no SDK, no yiem) starting the same four servers
  // together, each done at its tools/list answer. "The slowest one" is the slowest of the four
  // under the same contention; yiem's own share is what it adds on top.
  const delays = [["a", 200], ["b", 400], ["c", 600], ["slowest", 800]];
  const delayed = (name, delay) => server(name, [process.execPath, FIXTURE, "ok"], { env: { FIXTURE_DELAY_MS: String(delay) } });
  const connectAll = async (servers, slowestOwn) => {
    const started = performance.now();
    const s = await startMcp(servers, new ToolRegistry(), { clientVersion: "bench" });
    const elapsed = performance.now() - started;
    slowestOwn?.push(Math.max(...s.connections.map((c) => c.durationMs)));
    await s.close();
    return elapsed;
  };
  const bareAll = async () => {
    const started = performance.now();
    await Promise.all(delays.map(([, delay]) => bareClient(delay, env)));
    return performance.now() - started;
  };
  const ownSlowest = [];
  const { baseline: bare, measured: four } = await alternate(
    bareAll,
    () => connectAll(delays.map(([name, delay]) => delayed(name, delay)), ownSlowest),
    { runs: Math.max(7, Math.min(ctx.runs, 11)), warmup: 1 },
  );
  const b4 = median(bare);
  const f = median(four);
  const inside = median(four.map((total, i) => total - ownSlowest[i + 1]));
  rows.push(limitRow("mcp: 4 stdio servers (handshakes of 200–800 ms) connect through yiem vs 4 bare clients starting them together", ms(b4), ms(f), `${f - b4 >= 0 ? "+" : "−"}${Math.abs(f - b4).toFixed(0)} ms`, "≤ +50 ms", f - b4 <= 50));
  rows.push(limitRow("mcp: the same start, all four ready vs the slowest server's own spawn → tools/list inside it", "—", ms(f), `+${inside.toFixed(0)} ms`, "≤ +50 ms", inside <= 50));
  // For scale: the slowest server alone (no contention) and the four one after another.
  const alone = [];
  for (let i = 0; i < 5; i++) alone.push(await connectAll([delayed("slowest", 800)]));
  rows.push(limitRow("mcp: (scale) the 4 servers together vs the slowest one started alone", ms(median(alone)), ms(f), `+${(f - median(alone)).toFixed(0)} ms`, "—", null));
  const oneByOne = [];
  for (let i = 0; i < 3; i++) {
    let total = 0;
    for (const [name, delay] of delays) total += await connectAll([delayed(name, delay)]);
    oneByOne.push(total);
  }
  rows.push(ratioRowOf("mcp: the 4 servers in parallel vs one after another", median(oneByOne), f, 0.6));
  return rows;
}
