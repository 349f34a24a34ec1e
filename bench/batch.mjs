/**
 * `yiem batch` at scale (issue 25 item 6), against the scripted server answering at once: every
 * item makes 2 tool round trips (the `noop` tool twice, then "done").
 * - speed: ITEMS items through `yiem batch --concurrency 16` vs the same items through
 *   `xargs -P 2` over one `yiem run` per item (what users write today); budget ≥ 10× faster;
 * - memory: the batch's max RSS (≤ 250 MB), and the max RSS of 10 × ITEMS items against that of
 *   ITEMS items (≤ 1.2×: no growth per item);
 * - streaming: a 1 GB input (generated in the workspace, written in chunks) starts its first
 *   item (the server's first request) within 1 s of the process's start: measured by default
 *   (the check pass reads every line first) and with `--no-check`.
 * One run of each (a batch of 1,000 runs is itself the repetition); YIEM_BENCH_BATCH_ITEMS sets
 * ITEMS (default 1000) for a quick look on a slow machine.
 */
import { spawn } from "node:child_process";
import { closeSync, createWriteStream, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { runOnce, cleanEnv } from "./lib/measure.mjs";
import { startChatServer, toolResultCount } from "./lib/chat-server.mjs";
import { writeSpec } from "./lib/fixtures.mjs";
import { yiem, yiemEnv } from "./lib/yiem.mjs";
import { limitRow, ms } from "./lib/table.mjs";

const ROUND_TRIPS = 2;
const CONCURRENCY = 16;
const XARGS_PARALLEL = 2;
const SPEED_BUDGET = 10;
const RSS_BUDGET_MB = 250;
const RSS_GROWTH_BUDGET = 1.2;
const FIRST_ITEM_BUDGET_MS = 1000;
const BIG_INPUT_BYTES = 1024 ** 3;
/** How long the big input may take to start its first item before the row fails. */
const FIRST_ITEM_WAIT_MS = 180_000;

/** Two noop calls, then the answer. */
function twoRoundTrips(body) {
  return toolResultCount(body) < ROUND_TRIPS ? { toolCalls: [{ name: "noop", arguments: "{}" }] } : { content: "done" };
}

/** A JSONL input of `count` items, and the same prompts one per line for xargs. */
function writeInputs(ws, count, tag) {
  const lines = [];
  const prompts = [];
  for (let i = 1; i <= count; i++) {
    lines.push(JSON.stringify({ id: `item-${i}`, prompt: `item ${i}` }));
    prompts.push(`item ${i}`);
  }
  const input = ws.path(`batch-${tag}.jsonl`);
  const promptFile = ws.path(`batch-${tag}.prompts`);
  writeFileSync(input, `${lines.join("\n")}\n`);
  writeFileSync(promptFile, `${prompts.join("\n")}\n`);
  return { input, promptFile };
}

/** Results lines with status ok; throws when any item did not end ok or an id is missing. */
function checkResults(file, count) {
  const ids = new Set();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line === "") continue;
    const result = JSON.parse(line);
    if (result.status !== "ok" || result.text !== "done") throw new Error(`item ${result.id}: ${result.status} ${result.error ?? ""}`);
    ids.add(result.id);
  }
  if (ids.size !== count) throw new Error(`${ids.size} results for ${count} items`);
}

export async function benchBatch(ctx) {
  const items = Number(process.env.YIEM_BENCH_BATCH_ITEMS ?? 1000);
  const server = await startChatServer(twoRoundTrips);
  const rows = [];
  try {
    const spec = writeSpec(ctx.ws, "batch.yaml", { baseURL: server.url, toolDir: ctx.dirs.noop });
    const env = yiemEnv(ctx.cacheDir);
    const batch = async (count, tag) => {
      const { input } = writeInputs(ctx.ws, count, tag);
      const out = ctx.ws.path(`batch-${tag}.results.jsonl`);
      const r = await runOnce(yiem("batch", "-c", spec, input, "-o", out, "--concurrency", String(CONCURRENCY), "--events", "none"), { cwd: ctx.ws.root, env, memory: true });
      checkResults(out, count);
      process.stderr.write(`bench: batch: ${count} items took ${ms(r.ms)}, max RSS ${(r.maxRssKb / 1024).toFixed(0)} MB\n`);
      return r;
    };

    // Speed: the same items both ways.
    const { promptFile } = writeInputs(ctx.ws, items, "xargs");
    // xargs exits non-zero when any run did; runOnce then fails the benchmark.
    const promptFd = openSync(promptFile, "r");
    const xargs = await runOnce(["xargs", "-P", String(XARGS_PARALLEL), "-d", "\n", "-n", "1", ...yiem("run", "-c", spec, "--events", "none", "--no-stdin")], { cwd: ctx.ws.root, env, stdin: promptFd })
      .finally(() => closeSync(promptFd));
    process.stderr.write(`bench: batch: xargs -P ${XARGS_PARALLEL} over ${items} yiem runs took ${ms(xargs.ms)}\n`);
    const once1 = await batch(items, "speed");
    const speedup = xargs.ms / once1.ms;
    rows.push(limitRow(`batch: ${items} items × ${ROUND_TRIPS} tool round trips, --concurrency ${CONCURRENCY} vs xargs -P ${XARGS_PARALLEL} yiem run`, ms(xargs.ms), ms(once1.ms), `${speedup.toFixed(1)}× faster`, `≥ ${SPEED_BUDGET}× faster`, speedup >= SPEED_BUDGET));
    const rssMb = once1.maxRssKb / 1024;
    rows.push(limitRow(`batch: max RSS of ${items} items`, "—", `${rssMb.toFixed(0)} MB`, `${rssMb.toFixed(0)} MB`, `≤ ${RSS_BUDGET_MB} MB`, rssMb <= RSS_BUDGET_MB));

    // Memory per item: 10 × the items.
    const tenfold = await batch(items * 10, "tenfold");
    const growth = tenfold.maxRssKb / once1.maxRssKb;
    rows.push(limitRow(`batch: max RSS of ${items * 10} items vs ${items}`, `${rssMb.toFixed(0)} MB`, `${(tenfold.maxRssKb / 1024).toFixed(0)} MB`, `${growth.toFixed(2)}×`, `≤ ${RSS_GROWTH_BUDGET}×`, growth <= RSS_GROWTH_BUDGET));

    // Streaming: by default the check pass reads every line before the first item starts
    // (docs/batch.md, "Bad lines, and the check pass"); --no-check starts at once.
    const big = await writeBigInput(ctx);
    try {
      for (const flags of [[], ["--no-check"]]) {
        try {
          rows.push(await firstItemOf(ctx, env, big, flags));
        } catch (error) {
          rows.push(limitRow(`batch: first item of a 1 GB input${flags.length ? ` (${flags.join(" ")})` : ""}`, "—", "—", `failed: ${String(error.message).split("\n")[0]}`, `≤ ${ms(FIRST_ITEM_BUDGET_MS)}`, false));
        }
      }
    } finally {
      rmSync(big.file, { force: true });
    }
    return rows;
  } finally {
    await server.close();
  }
}

/** A ~1 GB input in the workspace, written in chunks (never held whole). */
async function writeBigInput(ctx) {
  const file = ctx.ws.path("batch-1gb.jsonl");
  const prompt = "x".repeat(1000);
  const stream = createWriteStream(file);
  let written = 0;
  let lines = 0;
  while (written < BIG_INPUT_BYTES) {
    const chunk = [];
    for (let i = 0; i < 1000; i++) chunk.push(JSON.stringify({ id: `big-${++lines}`, prompt }));
    const text = `${chunk.join("\n")}\n`;
    written += Buffer.byteLength(text);
    if (!stream.write(text)) await once(stream, "drain");
  }
  stream.end();
  await once(stream, "finish");
  return { file, bytes: written, lines };
}

/** Starts the batch on the big input with `flags` and times the server's first request (then kills it). */
async function firstItemOf(ctx, env, big, flags) {
  let firstRequestAt = null;
  const server = await startChatServer((body) => {
    firstRequestAt ??= performance.now();
    return twoRoundTrips(body);
  });
  const spec = writeSpec(ctx.ws, "batch-big.yaml", { baseURL: server.url, toolDir: ctx.dirs.noop });
  const out = ctx.ws.path("batch-1gb.results.jsonl");
  rmSync(out, { force: true });
  try {
    const started = performance.now();
    const [command, ...args] = yiem("batch", "-c", spec, big.file, "-o", out, "--events", "none", ...flags);
    const child = spawn(command, args, { cwd: ctx.ws.root, env: { ...cleanEnv(), ...env }, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const exited = once(child, "exit");
    const deadline = started + FIRST_ITEM_WAIT_MS;
    while (firstRequestAt === null && performance.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 5));
    child.kill("SIGKILL");
    await exited;
    if (firstRequestAt === null) throw new Error(`no item started within ${FIRST_ITEM_WAIT_MS / 1000} s\n${stderr.slice(-2000)}`);
    const firstMs = firstRequestAt - started;
    const name = `batch: first item of a ${(big.bytes / 1024 ** 3).toFixed(2)} GB input (${big.lines} lines)${flags.length ? `, ${flags.join(" ")}` : ""}`;
    return limitRow(name, "—", ms(firstMs), ms(firstMs), `≤ ${ms(FIRST_ITEM_BUDGET_MS)}`, firstMs <= FIRST_ITEM_BUDGET_MS);
  } finally {
    await server.close();
    rmSync(out, { force: true });
  }
}
