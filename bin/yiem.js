#!/usr/bin/env node
// The yiem command. The code lives in dist/bundle/ (built by `npm ci` / `npm run build`): one
// CommonJS bundle, loaded by dist/bundle/start.cjs with a V8 code cache that is written after the
// command ran (src/code-cache.ts).
// This file is CommonJS (bin/package.json): `--version` is answered here without loading Node's
// ES module loader or any of dist/, since it is what scripts call most often.
// It is the only file that ends the process or sets process-wide things: `main` returns the exit
// code and talks to the process only through the io of src/cli/host/process-io.ts.
// It sets no V8 flags (`v8.setFlagsFromString`): V8 then rejects the code cache Node ships for its
// own built-in modules, and every one loaded later (http, net, streams, worker_threads) is
// compiled from source, ~25 ms of a one-turn run (docs/performance.md, "Twelfth pass").
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
  const start = require("../dist/bundle/start.cjs");
  // Before anything can build process.stdout or process.stderr: the channel guard then knows
  // whether they exist yet (src/channels/process-streams.ts), and neither is built for nothing.
  start.trackProcessStreams();
  // The command word (`tools` in `yiem -c spec.yaml tools list`) names the command whose code
  // cache entries the bundles use (src/code-cache.ts).
  start.useCodeCacheOf(start.commandWordOf(args));
  // `yiem batch INPUT`: the check pass's worker starts now, while the CLI loads (src/cli/early-scan.ts).
  start.startEarlyRangeScans(args);
  let io;
  new Promise((loaded) => loaded(start.loadYiem()))
    .then(({ main, processIo }) => main(args, (io = processIo())))
    .then(
      (code) => {
        start.saveCodeCaches();
        exit(code);
      },
      (error) => {
        process.stderr.write(`yiem: internal error: ${error?.stack ?? error}\n`);
        // Through the io once there is one: its exit is bounded and takes this code, even after a
        // command's end fixed another (src/exit-listeners.ts).
        if (io) io.host.exitNow(1);
        exit(1);
      },
    );
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
