#!/usr/bin/env node
/**
 * Start-up of this build against another built checkout, alternating run by run in one window
 * (docs/performance.md, "Issue 26, fourth pass"): per command, `node -e 0`, the other build, this
 * build with a warm V8 code cache and this build with its code cache deleted before every run
 * (`cold`). Wall time from spawn to exit and CPU time (user + sys, GNU time) per arm, medians.
 * Both arms start clean (`cleanEnv`) and keep their caches in a fresh temporary folder.
 *
 *   node bench/startup-ab.mjs --against /path/to/other/checkout [--runs 11] [--only tools,config,oneturn,replay]
 *
 * Without `--against` the table has this build's two arms only. Needs /usr/bin/time.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { GNU_TIME, cleanEnv, median, stripStartupEnv } from "./lib/measure.mjs";
import { startChatServer } from "./lib/chat-server.mjs";
import { createWorkspace, writeSpec, writeTools } from "./lib/fixtures.mjs";
import { BIN, NODE, REPO, assertBuilt, yiemEnv } from "./lib/yiem.mjs";

const { values } = parseArgs({ options: { against: { type: "string" }, runs: { type: "string", default: "11" }, only: { type: "string", default: "tools,config,oneturn,replay" } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, not ${values.runs}`);
if (!existsSync(GNU_TIME)) throw new Error(`${GNU_TIME} is missing: this benchmark reads CPU time from GNU time`);
assertBuilt();
const otherBin = values.against ? join(resolve(values.against), "bin", "yiem.js") : null;
if (otherBin && !existsSync(otherBin)) throw new Error(`${otherBin} does not exist: --against names a built checkout of yiem`);

stripStartupEnv();
const ws = createWorkspace();
const dirs = writeTools(ws);
const server = await startChatServer(() => ({ content: "hello from the bench server" }));
const spec = writeSpec(ws, "one-turn.yaml", { baseURL: server.url, toolDir: dirs.noop });

/** One run of `argv`: wall ms and CPU ms; throws on a failed run. */
function once(argv, cwd, env) {
  const timeFile = join(tmpdir(), `yiem-ab-${process.pid}-${Math.random().toString(36).slice(2)}`);
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(GNU_TIME, ["-f", "%U %S", "-o", timeFile, ...argv], { cwd, env: { ...cleanEnv(), ...env }, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", fail);
    child.on("close", (code) => {
      const ms = performance.now() - started;
      const [user, sys] = readFileSync(timeFile, "utf8").trim().split("\n").pop().split(" ").map(Number);
      rmSync(timeFile, { force: true });
      if (code !== 0) fail(new Error(`${argv.join(" ")} exited ${code}\n${stderr.slice(-2000)}`));
      else done({ ms, cpu: (user + sys) * 1000 });
    });
  });
}

const COMMANDS = {
  tools: [["tools", "list"], REPO],
  config: [["config"], REPO],
  oneturn: [["run", "-c", spec, "hi"], ws.root],
  replay: [["run", "--model", "replay:configs/demo.replay.jsonl", "What time is it in Tokyo?"], REPO],
};
const ARMS = {
  "node -e 0": (_args, cwd) => once([NODE, "-e", "0"], cwd, {}),
  ...(otherBin ? { other: (args, cwd) => once([NODE, otherBin, ...args], cwd, yiemEnv(ws.path("cache-other"))) } : {}),
  warm: (args, cwd) => once([NODE, BIN, ...args], cwd, yiemEnv(ws.path("cache-warm"))),
  cold: (args, cwd) => {
    rmSync(ws.path("cache-cold", "code"), { recursive: true, force: true });
    return once([NODE, BIN, ...args], cwd, yiemEnv(ws.path("cache-cold")));
  },
};

const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");
process.stdout.write(`load average ${load()} · ${runs} alternating runs${otherBin ? ` · other: ${values.against}` : ""}\n\n`);
process.stdout.write(`| command | ${Object.keys(ARMS).join(" | ")} |\n| --- |${Object.keys(ARMS).map(() => " --- |").join("")}\n`);
try {
  for (const name of values.only.split(",")) {
    if (!COMMANDS[name]) throw new Error(`--only: unknown command ${name} (${Object.keys(COMMANDS).join(", ")})`);
    const [args, cwd] = COMMANDS[name];
    const samples = Object.fromEntries(Object.keys(ARMS).map((arm) => [arm, { ms: [], cpu: [] }]));
    for (let i = 0; i < runs + 2; i++) {
      for (const [arm, run] of Object.entries(ARMS)) {
        const sample = await run(args, cwd);
        if (i < 2) continue; // warm-up rounds
        samples[arm].ms.push(sample.ms);
        samples[arm].cpu.push(sample.cpu);
      }
    }
    const bare = median(samples["node -e 0"].ms);
    const cells = Object.values(samples).map((s) => `${median(s.ms).toFixed(0)} ms, ${median(s.cpu).toFixed(0)} ms CPU (${(median(s.ms) / bare).toFixed(2)}×)`);
    process.stdout.write(`| ${name} | ${cells.join(" | ")} |\n`);
  }
} finally {
  await server.close();
  ws.remove();
}
process.stdout.write(`\nload average ${load()}\n`);
