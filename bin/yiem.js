#!/usr/bin/env node
// The yiem command. The code lives in dist/bundle/ (built by `npm ci` / `npm run build`).
// This file is CommonJS (bin/package.json): `--version` is answered here without loading Node's
// ES module loader or any of dist/, since it is what scripts call most often.
"use strict";

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { version } = JSON.parse(require("node:fs").readFileSync(`${__dirname}/../package.json`, "utf8"));
  process.stdout.write(`${version}\n`);
} else {
  // Stack traces name src/ (the bundle's source maps) with --debug only: reading maps costs start-up.
  if (args.includes("--debug")) process.setSourceMapsEnabled(true);
  import("../dist/bundle/cli.js").then(({ main }) => main(args)).catch((error) => {
    process.stderr.write(`yiem: internal error: ${error?.stack ?? error}\n`);
    process.exitCode = 1;
  });
}
