#!/usr/bin/env node
// The yiem command. The code lives in dist/bundle/ (built by `npm ci` / `npm run build`): one
// CommonJS bundle, loaded by dist/bundle/start.cjs with a V8 code cache that is written after the
// command ran (src/code-cache.ts).
// This file is CommonJS (bin/package.json): `--version` is answered here without loading Node's
// ES module loader or any of dist/, since it is what scripts call most often.
// It is the only file that ends the process or sets process-wide things: `main` returns the exit
// code and talks to the process only through the io of src/cli/host/process-io.ts.
"use strict";

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const fs = require("node:fs");
  const { version } = JSON.parse(fs.readFileSync(`${__dirname}/../package.json`, "utf8"));
  writeStdout(`${version}\n`);
} else {
  // Taken before any command runs: a command's channel guard makes process.exit throw for tool code.
  const exit = process.exit.bind(process);
  // Stack traces name src/ (the bundle's source maps) with --debug only: reading maps costs start-up.
  if (args.includes("--debug")) process.setSourceMapsEnabled(true);
  const v8Flags = args[0] === "run" ? tuneV8ForRun() : [];
  const start = require("../dist/bundle/start.cjs");
  // Before anything can build process.stdout or process.stderr: the channel guard then knows
  // whether they exist yet (src/channels/process-streams.ts), and neither is built for nothing.
  start.trackProcessStreams();
  start.noteV8Flags(v8Flags);
  // The first word names the command whose compiled functions the cache gains. The caches are
  // written once: before the exit bound starts the watch thread (process-io.ts), else here.
  const saveCodeCaches = () => start.saveCodeCaches(args.find((arg) => !arg.startsWith("-")) ?? "");
  new Promise((loaded) => loaded(start.loadYiem()))
    .then(({ main, processIo }) => main(args, processIo({ saveCodeCaches })))
    .then(
      (code) => {
        saveCodeCaches();
        exit(code);
      },
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
 * Other commands are left alone: they make no HTTP request, and transpiling many tools on a cold
 * cache is slower with a small young generation. Returns the flags (V8 rejects a code cache made
 * under other flags, so they are part of its entry's name).
 */
function tuneV8ForRun() {
  const { setFlagsFromString } = require("node:v8");
  const flags = ["--liftoff-only", "--semi-space-growth-factor=1"];
  for (const flag of flags) setFlagsFromString(flag);
  return flags;
}

/**
 * Writes `text` to fd 1 directly: `process.stdout` on a pipe builds a stream (Node's net and
 * stream modules, ~28 of them, most of `--version`'s cost beyond `node -e 0`). A reader that
 * is gone (EPIPE, `| head -c0`) is not an error: the output is dropped, as for every command's
 * output (src/cli/output.ts). What a direct write cannot take otherwise (a full non-blocking
 * pipe, a closed fd) goes through process.stdout.
 */
function writeStdout(text) {
  const bytes = Buffer.from(text);
  let written = 0;
  try {
    while (written < bytes.length) written += require("node:fs").writeSync(1, bytes, written);
  } catch (error) {
    if (error?.code === "EPIPE") return;
    process.stdout.write(bytes.subarray(written));
  }
}
