/**
 * The command line of `yiem batch` and `yiem batch merge` (docs/batch.md): its flags for yargs,
 * kept out of main.ts (which registers them) so that file stays one page per concern. Imports
 * nothing but types: start-up cost is nil.
 */
import type { Argv } from "yargs";
import { withCommandHelp } from "./help.js";
import { withAgentOptions, type AgentFlagTexts } from "./agent-flags.js";

/** `base` adds the options every command takes and the spec-key flags (main.ts). */
export function registerBatchCommands<T>(y: Argv<T>, base: <U>(y: Argv<U>) => Argv<U>) {
  return y
    .command("merge <files...>", "Join shard results into one file; check every input id appears exactly once", (s) => withCommandHelp(s, "batch merge")
      .positional("files", { type: "string", array: true, demandOption: true, describe: "The results files of the shards" })
      .option("output", { alias: "o", type: "string", describe: "The merged results file (required)" })
      .option("input", { type: "string", describe: "The batch's input: every id of it must be in the results exactly once" }))
    .command("$0 [input]", "Run the agent on every line of the input", (s) => batchOptions(withCommandHelp(base(s), "batch")));
}

/** Batch's wording of the flags it shares with run (./agent-flags.ts); `--timeout` is its own, per item. */
const BATCH_FLAG_TEXTS: AgentFlagTexts = {
  attach: "Add a file to every item's prompt (repeatable)",
  outputSchema: "Each answer must be JSON valid against this JSON Schema (FILE, or the JSON itself): the result's structured",
  maxTurns: "Model turns at most, per item",
};

function batchOptions<T>(y: Argv<T>) {
  return withAgentOptions(y
    .positional("input", { type: "string", describe: "The input: JSONL items, plain prompt lines, or OpenAI batch-request lines; - reads stdin" })
    .option("output", { alias: "o", type: "string", describe: "The results file: one JSON line per item as it finishes (also the ledger --resume reads)" })
    .option("concurrency", { alias: "j", type: "number", describe: "Items run at once (default 4)" })
    .option("rate", { type: "number", describe: "Model requests per minute at most, across the batch" })
    .option("timeout", { type: "string", describe: "Per item: ms or 30s, 2m" })
    .option("batch-timeout", { type: "string", describe: "Whole batch: unfinished items are recorded aborted (ms or 30s, 2m, 1h)" })
    .option("grace", { type: "string", describe: "After SIGINT/SIGTERM, how long running items may finish (default 10s)" })
    .option("resume", { type: "boolean", describe: "Continue the results file: skip ids with a final result, run the rest" })
    .option("shard", { type: "string", describe: "Run one shard: I/N (1-based), or auto (JOB_COMPLETION_INDEX or YIEM_SHARD_INDEX, 0-based, with YIEM_SHARD_COUNT)" })
    .option("skip-bad-lines", { type: "boolean", describe: "Record bad input lines as error results (id line:N) and run the rest, instead of exit 2" })
    .option("check", { type: "boolean", describe: "--no-check: start at once, without the pass that checks every line first (bad lines become error results)" })
    .option("full-check", { type: "boolean", describe: "Check every line whole before anything runs (by default, past the first 32 MiB or 100,000 lines only ids are checked first)" })
    .option("prompt-template", { type: "string", describe: "The prompt of each item, TEXT or @FILE, with {{name}} filled from its vars ({{prompt}}, {{id}})" })
    .option("events", { type: "string", choices: ["ndjson", "pretty", "github", "none"], describe: "stderr: ndjson (given: with every item's events), pretty (a progress bar), github (GitHub Actions workflow commands), none (default: pretty on a terminal, else ndjson batch events)" }), BATCH_FLAG_TEXTS)
    .option("strict", { type: "boolean", describe: "Exit 2 before anything runs when a tool or hook cannot load or start, or a tool glob matches nothing" });
}
