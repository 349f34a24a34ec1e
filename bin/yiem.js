#!/usr/bin/env node
// The yiem command. The code lives in dist/bundle/ (built by `npm ci` / `npm run build`).
// `--version` is answered here, before any of it loads: it is what scripts call most often.
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`${version}\n`);
} else {
  // Stack traces name src/ (the bundle's source maps) with --debug only: reading maps costs start-up.
  if (args.includes("--debug")) process.setSourceMapsEnabled(true);
  const { main } = await import("../dist/bundle/cli.js");
  main(args).catch((error) => {
    process.stderr.write(`yiem: internal error: ${error?.stack ?? error}\n`);
    process.exitCode = 1;
  });
}
