/**
 * The check pass's worker started before the CLI loads (docs/batch.md, "How the ids are read"):
 * bin/yiem.js calls `startEarlyRangeScans` with the command line as soon as the start bundle is
 * in, so the worker's start and scan overlap the loading of the CLI, its parse and the spec.
 *
 * Rules:
 * - Only a plain `yiem batch INPUT …` starts one (`earlyScanInput`): a line with a flag that
 *   changes the check (`--resume`, `--shard`, `--check`/`--no-check`, `--full-check`), `--help`,
 *   stdin or `batch merge` does not, nor a line whose input it cannot tell (the word after a flag
 *   it does not know to be a boolean is that flag's value). yargs' parse still decides what the
 *   line means: this is only a guess at which file the check will read.
 * - The batch command takes the scans (`takeEarlyRangeScans`) when it reads that file with the
 *   default check, and the check pass uses them only when its own plan of the file (and its
 *   shard) is the same (../batch/check-pass.ts); scans not taken are cancelled. A scan nobody takes (the command failed
 *   before) is an unref'd worker, ended with the process.
 * - It never throws and never writes: the command itself reads the input and reports what is
 *   wrong with it.
 * - Part of the start bundle (scripts/bundle.mjs SHARED): what it imports is small.
 */
import { resolve } from "node:path";
import { BATCH_BOOLEAN_FLAGS, commandWordIndex, takesValue } from "./command-word.js";
import { rangeRequests } from "../batch/range-plan.js";
import { startWorkerScan, type RangeScan } from "../batch/range-worker.js";

/** Flags (and their `--no-` forms) with which no scan starts early (see module rules). */
const NOT_EARLY = new Set(["--resume", "--shard", "--check", "--full-check", "--help", "-h"]);

let started: RangeScan[] | undefined;

/** The input of a command line that may start the check's worker early, or undefined (see module rules). */
export function earlyScanInput(args: readonly string[]): string | undefined {
  const at = commandWordIndex(args);
  if (at < 0 || args[at] !== "batch") return undefined;
  for (const arg of args) {
    const name = arg.split("=", 1)[0]!;
    if (arg === "--" || NOT_EARLY.has(name) || NOT_EARLY.has(name.replace(/^--no-/, "--"))) return undefined;
  }
  let input: string | undefined;
  for (let i = at + 1; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "-") return undefined;
    if (arg.startsWith("-")) {
      if (takesValue(arg, BATCH_BOOLEAN_FLAGS)) i++;
      continue;
    }
    if (input !== undefined || (arg === "merge" && i === at + 1)) return undefined;
    input = arg;
  }
  return input;
}

/** Starts the check's worker for the input of `args`, when it may (see module rules). */
export function startEarlyRangeScans(args: readonly string[], cwd = process.cwd()): void {
  const scans: RangeScan[] = [];
  try {
    const input = earlyScanInput(args);
    if (input === undefined) return;
    for (const request of rangeRequests(resolve(cwd, input))) {
      const scan = startWorkerScan(request);
      if (scan) scans.push(scan);
    }
    if (scans.length > 0) started = scans;
  } catch {
    // The command reads the input itself, and says what is wrong with it.
    for (const scan of scans) scan.cancel();
  }
}

/** The scans started early for `file` (an absolute path), or undefined; any others are cancelled. `file` undefined: the command scans no ranges of its own. */
export function takeEarlyRangeScans(file: string | undefined): RangeScan[] | undefined {
  const scans = started;
  started = undefined;
  if (!scans) return undefined;
  if (file !== undefined && scans.every((scan) => scan.file === file)) return scans;
  for (const scan of scans) scan.cancel();
  return undefined;
}
