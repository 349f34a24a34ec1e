/**
 * `yiem mcp serve` benchmarks (issue 22), against dist/:
 * - initialize: from spawn until the `initialize` answer is on stdout, against `yiem --version`
 *   from spawn to exit, alternating runs, medians; budget ≤ 2× (both arms without
 *   NODE_EXTRA_CA_CERTS and NODE_OPTIONS, as the start-up rows: docs/performance.md);
 * - per-call overhead: a tools/call of the trivial `noop` tool over stdio (a raw JSON-RPC client
 *   on the pipes: the request written, its answer read) against calling the same tool's execute
 *   directly in this process (loaded by the same loader); single calls alternate, medians;
 *   budget ≤ +1 ms.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { writeSpec } from "./lib/fixtures.mjs";
import { alternate, median, runOnce } from "./lib/measure.mjs";
import { limitRow, ms, ratioRow } from "./lib/table.mjs";
import { REPO, yiem, yiemEnv } from "./lib/yiem.mjs";

const CALLS = 300;
const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } } };
const dist = (p) => import(pathToFileURL(join(REPO, "dist", p)).href);

/** A served process with a line reader on stdout: `request(message)` resolves with the answer to its id. */
function startServer(argv, env) {
  const child = spawn(argv[0], argv.slice(1), { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "ignore"] });
  const waiting = new Map();
  let buffer = "";
  child.stdout.setEncoding("utf8").on("data", (chunk) => {
    buffer += chunk;
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const message = JSON.parse(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
    }
  });
  const exited = new Promise((resolve) => child.on("close", resolve));
  return {
    request(message) {
      return new Promise((resolve) => {
        waiting.set(message.id, resolve);
        child.stdin.write(`${JSON.stringify(message)}\n`);
      });
    },
    notify: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    async close() {
      child.stdin.end();
      return exited;
    },
  };
}

export async function benchMcpServe(ctx) {
  const spec = writeSpec(ctx.ws, "serve.yaml", { baseURL: "http://127.0.0.1:9/v1", toolDir: ctx.dirs.noop, stream: false });
  const env = yiemEnv(ctx.cacheDir, { NODE_EXTRA_CA_CERTS: undefined, NODE_OPTIONS: undefined });
  const serveArgv = yiem("mcp", "serve", "-c", spec, "--events", "none");

  // ---- initialize after spawn, against --version ----
  const version = async () => {
    const r = await runOnce(yiem("--version"), { cwd: REPO, env });
    if (!/^\d+\.\d+\.\d+/.test(r.stdout)) throw new Error(`--version printed ${JSON.stringify(r.stdout)}`);
    return r.ms;
  };
  const initialize = async () => {
    const started = performance.now();
    const server = startServer(serveArgv, env);
    const answer = await server.request(INIT);
    const elapsed = performance.now() - started;
    if (answer.result?.serverInfo?.name !== "yiem") throw new Error(`initialize answered ${JSON.stringify(answer)}`);
    const code = await server.close();
    if (code !== 0) throw new Error(`mcp serve exited ${code}`);
    return elapsed;
  };
  const init = await alternate(version, initialize, { runs: ctx.runs, warmup: 2 });
  const rows = [ratioRow("mcp serve: initialize answered after spawn vs yiem --version", median(init.baseline), median(init.measured), 2)];

  // ---- one tools/call over stdio, against execute directly ----
  const [{ ToolRegistry }, { loadTools }] = await Promise.all([dist("tools/registry.js"), dist("tools/loader.js")]);
  const loaded = await loadTools([ctx.dirs.noop], { registry: new ToolRegistry() });
  const tool = loaded.registry.get("noop");
  if (!tool) throw new Error(`noop did not load: ${JSON.stringify(loaded.problems)}`);
  const signal = new AbortController().signal;
  const direct = async () => {
    const started = performance.now();
    const result = await tool.execute("c", { i: 1 }, signal, () => {});
    if (result.content[0].text !== "ok") throw new Error("noop failed");
    return performance.now() - started;
  };
  const server = startServer(serveArgv, env);
  await server.request(INIT);
  server.notify({ jsonrpc: "2.0", method: "notifications/initialized" });
  let id = 1;
  const served = async () => {
    const started = performance.now();
    const answer = await server.request({ jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name: "noop", arguments: { i: id } } });
    const elapsed = performance.now() - started;
    if (answer.result?.content?.[0]?.text !== "ok") throw new Error(`tools/call answered ${JSON.stringify(answer)}`);
    return elapsed;
  };
  try {
    const { baseline, measured } = await alternate(direct, served, { runs: CALLS * Math.max(1, Math.min(ctx.runs, 5)), warmup: 50 });
    const b = median(baseline);
    const m = median(measured);
    rows.push(limitRow(`mcp serve: tools/call round trip over stdio vs the tool's execute (median of ${baseline.length})`, ms(b), ms(m), `${m - b >= 0 ? "+" : "−"}${Math.abs(m - b).toFixed(2)} ms`, "≤ +1 ms", m - b <= 1));
  } finally {
    await server.close();
  }
  return rows;
}
