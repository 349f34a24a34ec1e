/**
 * `yiem batch` at scale (issue 25 item 6), against the scripted server answering at once: every
 * item makes 2 tool round trips (the `noop` tool twice, then "done"). Three arms (`--batch-arms`,
 * default all):
 * - speed: ITEMS items (`--batch-items`, default 1,000) through `yiem batch --concurrency 16` vs
 *   the same items through `xargs -P 2` over one `yiem run` per item (what users write today);
 *   budget ≥ 10× faster; and that batch's max RSS (≤ 250 MB);
 * - memory: batches of A and B items (`--batch-memory-items A,B`, default 1,000,10,000): max RSS
 *   of B vs A (≤ 1.2×: no growth per item), and the heap after a forced full GC at the end of
 *   each (./lib/heap-probe.mjs: what is still referenced, without what V8 has not given back);
 * - big: a ~1 GB input (`--batch-big-mb`, default 1024) of ~1 KB lines and one of ~100 B lines,
 *   each generated in the workspace in chunks: the time from spawn to the first item (the
 *   server's first request), by default (the check pass reads every line's id first), with
 *   `--full-check` (every line parsed whole first: the 1 KB file only; a row for scale, since
 *   the flag asks for the whole file to be parsed before anything runs) and with `--no-check`;
 *   each row's note gives the process's peak RSS and page faults by then (/proc, Linux).
 * One run of each (a batch of 1,000 runs is itself the repetition). YIEM_BENCH_BATCH_ITEMS still
 * sets ITEMS when the flag is not given.
 */
import { spawn } from "node:child_process";
import { closeSync, createWriteStream, fsyncSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { runOnce, cleanEnv, freshPageCostUs, procMemory } from "./lib/measure.mjs";
import { startChatServer, toolResultCount } from "./lib/chat-server.mjs";
import { writeSpec } from "./lib/fixtures.mjs";
import { NODE, BIN, yiem, yiemEnv } from "./lib/yiem.mjs";
import { limitRow, ms } from "./lib/table.mjs";

const ROUND_TRIPS = 2;
const CONCURRENCY = 16;
const XARGS_PARALLEL = 2;
const SPEED_BUDGET = 10;
const RSS_BUDGET_MB = 250;
const RSS_GROWTH_BUDGET = 1.2;
const FIRST_ITEM_BUDGET_MS = 1000;
/** How long the big input may take to start its first item before the row fails. */
const FIRST_ITEM_WAIT_MS = 180_000;
const HEAP_PROBE = fileURLToPath(new URL("./lib/heap-probe.mjs", import.meta.url));
const ARMS = ["speed", "memory", "big"];

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

/** A whole number ≥ 1 from a flag (or `fallback`); throws naming the flag. */
function count(value, flag, fallback) {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} takes a whole number ≥ 1 (got ${JSON.stringify(value)})`);
  return n;
}

/** The arm sizes from bench/run.mjs's flags (see module doc). */
export function batchOptions(flags = {}) {
  const items = count(flags.items ?? process.env.YIEM_BENCH_BATCH_ITEMS, "--batch-items", 1000);
  const memory = (flags.memoryItems ?? "1000,10000").split(",").map((v) => count(v.trim(), "--batch-memory-items", 1));
  if (memory.length !== 2 || memory[1] <= memory[0]) throw new Error("--batch-memory-items takes two sizes, the second larger: A,B");
  const arms = (flags.arms ?? ARMS.join(",")).split(",").map((a) => a.trim());
  const unknown = arms.filter((a) => !ARMS.includes(a));
  if (unknown.length) throw new Error(`--batch-arms: unknown ${unknown.join(", ")} (choose from ${ARMS.join(", ")})`);
  return { items, memory, bigBytes: count(flags.bigMb, "--batch-big-mb", 1024) * 1024 * 1024, arms: new Set(arms) };
}

export async function benchBatch(ctx) {
  const options = batchOptions(ctx.batch);
  const server = await startChatServer(twoRoundTrips);
  const rows = [];
  try {
    const spec = writeSpec(ctx.ws, "batch.yaml", { baseURL: server.url, toolDir: ctx.dirs.noop });
    const env = yiemEnv(ctx.cacheDir);
    /** One batch of `n` items with the heap probe: its time, max RSS and the heap after the last forced GC. */
    const batch = async (n, tag) => {
      const { input } = writeInputs(ctx.ws, n, tag);
      const out = ctx.ws.path(`batch-${tag}.results.jsonl`);
      const heapFile = ctx.ws.path(`batch-${tag}.heap.jsonl`);
      const argv = [NODE, "--expose-gc", "--import", HEAP_PROBE, BIN, "batch", "-c", spec, input, "-o", out, "--concurrency", String(CONCURRENCY), "--events", "none"];
      const r = await runOnce(argv, { cwd: ctx.ws.root, env: { ...env, YIEM_BENCH_HEAP_FILE: heapFile, YIEM_BENCH_HEAP_EVERY_MS: "2000" }, memory: true });
      checkResults(out, n);
      const samples = readFileSync(heapFile, "utf8").trim().split("\n").map((line) => JSON.parse(line));
      r.heapMb = samples.at(-1).heapUsed / 2 ** 20;
      r.peakHeapMb = Math.max(...samples.map((s) => s.heapUsed)) / 2 ** 20;
      process.stderr.write(`bench: batch: ${n} items took ${ms(r.ms)}, max RSS ${(r.maxRssKb / 1024).toFixed(0)} MB, heap after GC ${r.heapMb.toFixed(1)} MB at the end (${r.peakHeapMb.toFixed(1)} MB at most)\n`);
      return r;
    };
    const runs = new Map();
    const batchOf = async (n) => {
      if (!runs.has(n)) runs.set(n, await batch(n, `n${n}`));
      return runs.get(n);
    };

    if (options.arms.has("speed")) {
      const { items } = options;
      const { promptFile } = writeInputs(ctx.ws, items, "xargs");
      // xargs exits non-zero when any run did; runOnce then fails the benchmark.
      const promptFd = openSync(promptFile, "r");
      const xargs = await runOnce(["xargs", "-P", String(XARGS_PARALLEL), "-d", "\n", "-n", "1", ...yiem("run", "-c", spec, "--events", "none", "--no-stdin")], { cwd: ctx.ws.root, env, stdin: promptFd })
        .finally(() => closeSync(promptFd));
      process.stderr.write(`bench: batch: xargs -P ${XARGS_PARALLEL} over ${items} yiem runs took ${ms(xargs.ms)}\n`);
      const one = await batchOf(items);
      const speedup = xargs.ms / one.ms;
      rows.push(limitRow(`batch: ${items} items × ${ROUND_TRIPS} tool round trips, --concurrency ${CONCURRENCY} vs xargs -P ${XARGS_PARALLEL} yiem run`, ms(xargs.ms), ms(one.ms), `${speedup.toFixed(1)}× faster`, `≥ ${SPEED_BUDGET}× faster`, speedup >= SPEED_BUDGET));
      const rssMb = one.maxRssKb / 1024;
      rows.push(limitRow(`batch: max RSS of ${items} items`, "—", `${rssMb.toFixed(0)} MB`, `${rssMb.toFixed(0)} MB`, `≤ ${RSS_BUDGET_MB} MB`, rssMb <= RSS_BUDGET_MB));
    }

    if (options.arms.has("memory")) {
      const [small, large] = options.memory;
      const a = await batchOf(small);
      const b = await batchOf(large);
      const growth = b.maxRssKb / a.maxRssKb;
      rows.push(limitRow(`batch: max RSS of ${large} items vs ${small}`, `${(a.maxRssKb / 1024).toFixed(0)} MB`, `${(b.maxRssKb / 1024).toFixed(0)} MB`, `${growth.toFixed(2)}×`, `≤ ${RSS_GROWTH_BUDGET}×`, growth <= RSS_GROWTH_BUDGET));
      rows.push(limitRow(`batch: heap after a forced GC at the end, ${large} items vs ${small}`, `${a.heapMb.toFixed(1)} MB`, `${b.heapMb.toFixed(1)} MB`, `${(b.heapMb / a.heapMb).toFixed(2)}× (${(((b.heapMb - a.heapMb) * 2 ** 20) / (large - small)).toFixed(0)} B/item)`, "for scale", null));
    }

    if (options.arms.has("big")) {
      for (const shape of [{ name: "~1 KB lines", prompt: "x".repeat(1000), flags: [[], ["--full-check"], ["--no-check"]] }, { name: "~100 B lines", prompt: "summarise the log of service checkout-api for 2026-12-01, errors first", flags: [[], ["--no-check"]] }]) {
        const big = await writeBigInput(ctx, options.bigBytes, shape.prompt);
        try {
          for (const flags of shape.flags) {
            const name = `batch: first item of a ${(big.bytes / 1024 ** 3).toFixed(2)} GB input of ${shape.name} (${big.lines.toLocaleString("en")} lines)${flags.length ? `, ${flags.join(" ")}` : ""}`;
            try {
              rows.push(await firstItemOf(ctx, env, big, flags, name));
            } catch (error) {
              rows.push(limitRow(name, "—", "—", `failed: ${String(error.message).split("\n")[0]}`, `≤ ${ms(FIRST_ITEM_BUDGET_MS)}`, false));
            }
          }
        } finally {
          rmSync(big.file, { force: true });
        }
      }
    }
    return rows;
  } finally {
    await server.close();
  }
}

/** An input of about `bytes` bytes in the workspace, of lines with `prompt`, written in chunks (never held whole). */
async function writeBigInput(ctx, bytes, prompt) {
  const file = ctx.ws.path("batch-big.jsonl");
  const stream = createWriteStream(file);
  let written = 0;
  let lines = 0;
  while (written < bytes) {
    const chunk = [];
    for (let i = 0; i < 1000; i++) chunk.push(JSON.stringify({ id: `big-${++lines}`, prompt }));
    const text = `${chunk.join("\n")}\n`;
    written += Buffer.byteLength(text);
    if (!stream.write(text)) await once(stream, "drain");
  }
  stream.end();
  await once(stream, "finish");
  // Written back before it is measured: otherwise the kernel's write-back of 1 GB runs beside the check.
  const fd = openSync(file, "r+");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return { file, bytes: written, lines };
}

/** Starts the batch on the big input with `flags` and times the server's first request (then kills it). */
async function firstItemOf(ctx, env, big, flags, name) {
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
    // What the check pass took, read before the kill: its peak memory and its page faults.
    const memory = procMemory(child.pid);
    child.kill("SIGKILL");
    await exited;
    if (firstRequestAt === null) throw new Error(`no item started within ${FIRST_ITEM_WAIT_MS / 1000} s\n${stderr.slice(-2000)}`);
    const firstMs = firstRequestAt - started;
    // `--full-check` asks for every line to be parsed before anything runs: the issue's "starts its first item within a second" is the streamed start's, so that row is for scale.
    const budgeted = !flags.includes("--full-check");
    const row = budgeted ? limitRow(name, "—", ms(firstMs), ms(firstMs), `≤ ${ms(FIRST_ITEM_BUDGET_MS)}`, firstMs <= FIRST_ITEM_BUDGET_MS) : limitRow(name, "—", ms(firstMs), ms(firstMs), "for scale (parses every line first)", null);
    if (memory) {
      const costUs = freshPageCostUs();
      row.note = `by the first item: peak RSS ${(memory.peakRssKb / 1024).toFixed(0)} MB, ${memory.minorFaults.toLocaleString("en")} page faults (at ${costUs.toFixed(1)} µs a fresh page on this machine, measured in this run: up to ${((memory.minorFaults * costUs) / 1000).toFixed(0)} ms of CPU, on both threads together)`;
    }
    return row;
  } finally {
    await server.close();
    rmSync(out, { force: true });
  }
}
