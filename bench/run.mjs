#!/usr/bin/env node
/**
 * `npm run bench`: runs every benchmark of issue 8 against the built CLI (dist/), prints one table
 * (benchmark | baseline | measured median | ratio or difference | budget | pass), and exits 1 when
 * a budget is missed (2 when a benchmark could not run). Every figure is a median of at least
 * `--runs` (default 15) runs, with its baseline measured in the same, alternating runs.
 *
 *   node bench/run.mjs [--runs N] [--only NAME[,NAME]] [--keep-startup-env]
 *                      [--batch-items N] [--batch-memory-items A,B] [--batch-big-mb MB] [--batch-arms speed,memory,big]
 *   names: startup, loop, tools500, parallel, events, mcp, mcp-serve, batch
 *
 * Every child runs without the variables that change Node's own start-up (NODE_EXTRA_CA_CERTS,
 * NODE_OPTIONS, …: lib/measure.mjs), as on a user's machine; `--keep-startup-env` keeps them.
 */
import { mkdirSync } from "node:fs";
import os from "node:os";
import { parseArgs } from "node:util";
import { createWorkspace, writeTools } from "./lib/fixtures.mjs";
import { formatTable } from "./lib/table.mjs";
import { assertBuilt, NODE } from "./lib/yiem.mjs";
import { keepStartupEnv, runOnce, stripStartupEnv } from "./lib/measure.mjs";
import { benchStartup } from "./startup.mjs";
import { benchLoop } from "./loop.mjs";
import { benchManyTools } from "./many-tools.mjs";
import { benchParallel } from "./parallel.mjs";
import { benchEvents } from "./events.mjs";
import { benchMcp } from "./mcp.mjs";
import { benchMcpServe } from "./mcp-serve.mjs";
import { benchBatch } from "./batch.mjs";

const BENCHMARKS = { startup: benchStartup, loop: benchLoop, tools500: benchManyTools, parallel: benchParallel, events: benchEvents, mcp: benchMcp, "mcp-serve": benchMcpServe, batch: benchBatch };

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "15" },
    only: { type: "string" },
    "keep-startup-env": { type: "boolean", default: false },
    // The batch benchmark's arm sizes (bench/batch.mjs).
    "batch-items": { type: "string" },
    "batch-memory-items": { type: "string" },
    "batch-big-mb": { type: "string" },
    "batch-arms": { type: "string" },
  },
});
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  process.stderr.write("--runs takes a positive integer\n");
  process.exit(2);
}
const names = values.only ? values.only.split(",") : Object.keys(BENCHMARKS);
const unknown = names.filter((n) => !(n in BENCHMARKS));
if (unknown.length) {
  process.stderr.write(`unknown benchmark ${unknown.join(", ")}; choose from ${Object.keys(BENCHMARKS).join(", ")}\n`);
  process.exit(2);
}

assertBuilt();
const startupVariables = stripStartupEnv();
if (values["keep-startup-env"]) keepStartupEnv();
const ws = createWorkspace();
const rows = [];
let failed = false;
try {
  const dirs = writeTools(ws);
  const cacheDir = ws.path("cache");
  mkdirSync(cacheDir);
  const ctx = { runs, ws, dirs, cacheDir, batch: { items: values["batch-items"], memoryItems: values["batch-memory-items"], bigMb: values["batch-big-mb"], arms: values["batch-arms"] } };
  for (const name of names) {
    process.stderr.write(`bench: ${name} …\n`);
    const started = performance.now();
    try {
      rows.push(...(await BENCHMARKS[name](ctx)));
    } catch (error) {
      failed = true;
      rows.push({ name, baseline: "—", measured: "—", result: `failed: ${String(error.message ?? error).split("\n")[0]}`, budget: "—", pass: false });
      process.stderr.write(`bench: ${name} failed: ${error.stack ?? error}\n`);
    }
    process.stderr.write(`bench: ${name} done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  }
} finally {
  ws.remove();
}

const version = (await runOnce([NODE, "-p", "process.version"])).stdout.trim();
const cpus = os.cpus();
process.stdout.write(`${formatTable(rows)}\n\n`);
for (const row of rows.filter((r) => r.note)) process.stdout.write(`${row.name}: ${row.note}\n`);
const envNote = startupVariables.length === 0 ? "no start-up variables were set"
  : `${startupVariables.join(", ")} ${values["keep-startup-env"] ? "kept (--keep-startup-env)" : "removed from every child"}`;
process.stdout.write(`median of ${runs} runs each · node ${version} · ${cpus.length} × ${cpus[0]?.model ?? "cpu"} · load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")} · ${envNote}\n`);
const missed = rows.filter((r) => r.pass === false).length;
process.stdout.write(missed === 0 ? "all budgets met\n" : `${missed} budget${missed === 1 ? "" : "s"} missed\n`);
process.exitCode = failed ? 2 : missed > 0 ? 1 : 0;
