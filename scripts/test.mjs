#!/usr/bin/env node
/**
 * `npm test`: the build and the typecheck side by side, then vitest (its arguments passed on:
 * `npm test -- test/cli`). Rules (docs/performance.md, "The test suite's wall time"):
 * - the two steps run at the same time (each tsc is one thread; on two cores one sat idle), each
 *   step's output is printed whole when it ends, and vitest starts only when both passed;
 * - the build's tsc runs with `--noCheck`: it emits exactly what `npm run build` emits, without
 *   type-checking src/ a second time. The typecheck program (tsconfig.check.json extends
 *   tsconfig.json: the same options) checks src/, test/ and tools/, so no check is lost here;
 *   `npm run build` on its own (prepack, postprepare) still checks.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const require = createRequire(`${root}package.json`);
const tsc = require.resolve("typescript/bin/tsc");
const vitestPackage = require.resolve("vitest/package.json");
const vitest = join(dirname(vitestPackage), JSON.parse(readFileSync(vitestPackage, "utf8")).bin.vitest);

/** Runs `node args` in the repository; resolves with its exit code and, when `quiet`, its output. */
function node(args, quiet) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: quiet ? ["ignore", "pipe", "pipe"] : "inherit" });
    let output = "";
    child.stdout?.on("data", (chunk) => (output += chunk));
    child.stderr?.on("data", (chunk) => (output += chunk));
    child.on("error", (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

/** One step: its commands one after the other, stopping at the first that fails. */
async function step(name, commands) {
  let output = "";
  for (const args of commands) {
    const result = await node(args, true);
    output += result.output;
    if (result.code !== 0) return { name, code: result.code, output };
  }
  return { name, code: 0, output };
}

const steps = await Promise.all([
  step("build", [[tsc, "-p", "tsconfig.json", "--noCheck"], ["scripts/bundle.mjs"]]),
  step("typecheck", [[tsc, "-p", "tsconfig.check.json"]]),
]);
let failed = false;
for (const { name, code, output } of steps) {
  if (output) process.stdout.write(output);
  if (code !== 0) {
    process.stderr.write(`npm test: ${name} failed (exit ${code})\n`);
    failed = true;
  }
}
if (failed) process.exit(1);
process.exitCode = (await node([vitest, "run", ...process.argv.slice(2)], false)).code;
