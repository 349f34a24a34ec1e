#!/usr/bin/env node
// The yiem command. The code lives in dist/ (built by `npm ci` / `npm run build`).
// CommonJS, so `yiem --version` (what scripts call most) is answered by Node's lighter CommonJS
// loader before any of dist/ loads; every other command imports the ES-module CLI.
"use strict";
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { version } = JSON.parse(require("node:fs").readFileSync(require("node:path").join(__dirname, "..", "package.json"), "utf8"));
  process.stdout.write(`${version}\n`);
} else {
  import("../dist/cli/main.js").then(({ main }) => main(args)).catch((error) => {
    process.stderr.write(`yiem: internal error: ${error?.stack ?? error}\n`);
    process.exitCode = 1;
  });
}
