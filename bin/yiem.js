#!/usr/bin/env node
// The yiem command. The code lives in dist/ (built by `npm ci` / `npm run build`).
// This file is the only one that ends the process or sets process-wide things: `main` returns
// the exit code and talks to the process only through the io of dist/cli/host/process-io.js.
// `--version` is answered here, before any of it loads: it is what scripts call most often.
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`${version}\n`);
} else {
  // Taken before any command runs: a command's channel guard makes process.exit throw for tool code.
  const exit = process.exit.bind(process);
  if (args[0] === "run") await tuneV8ForRun();
  const [{ main }, { processIo }] = await Promise.all([import("../dist/cli/main.js"), import("../dist/cli/host/process-io.js")]);
  main(args, processIo()).then(
    (code) => exit(code),
    (error) => {
      process.stderr.write(`yiem: internal error: ${error?.stack ?? error}\n`);
      exit(1);
    },
  );
}

/**
 * V8 settings for `yiem run` (a short-lived process); both flags are read when used, so setting
 * them at start-up takes effect (measured in docs/performance.md, "Memory"):
 * - WebAssembly is compiled by the baseline compiler only. The one WebAssembly module a run
 *   normally has is undici's HTTP parser (behind `fetch`); tiering it up to the optimising
 *   compiler peaks at ~30 MB RSS and delays the exit by ~0.1 s, for no measurable gain on
 *   API-sized responses.
 * - The young generation keeps its initial size instead of doubling up to 2 × 16 MB under the
 *   allocation of start-up and streaming (~−12 MB RSS).
 * Other commands are left alone: they make no HTTP request, loading node:v8 costs ~5 ms, and
 * transpiling many tools on a cold cache is slower with a small young generation.
 */
async function tuneV8ForRun() {
  const { setFlagsFromString } = await import("node:v8");
  setFlagsFromString("--liftoff-only");
  setFlagsFromString("--semi-space-growth-factor=1");
}
