#!/usr/bin/env node
// The yiem command. The code lives in dist/ (built by `npm ci` / `npm run build`).
import { main } from "../dist/cli/main.js";

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`yiem: internal error: ${error?.stack ?? error}\n`);
  process.exitCode = 1;
});
