/**
 * What `--help` shows beyond the flags: examples, the environment variables yiem reads and the
 * exit codes (kept in step with docs/cli.md by test/cli-help.test.ts). Plain strings only: this
 * module is loaded on every start-up.
 */
import type { Argv } from "yargs";
import { EXIT } from "./exit-codes.js";

const ENVIRONMENT = `Environment:
  YIEM_MODEL           The model when no --model is given (overrides the spec)
  OPENAI_BASE_URL      The server when no --base-url is given (overrides the spec)
  OPENAI_API_KEY       The API key (a spec may name another variable in model.apiKeyEnv)
  YIEM_CACHE_DIR       Where transformed tools and checked specs are cached
  NO_COLOR, FORCE_COLOR  Colour of the pretty progress view`;

/** One line per exit code; a code added to EXIT must be described here (the type says so). */
const EXIT_MEANINGS: Record<keyof typeof EXIT, string> = {
  ok: "The model answered, or a tool ended the run",
  failure: "Runtime failure: model server error after retries, replay file used up, internal error",
  usage: "Usage or spec error: unknown flag, bad value, no prompt, invalid spec, missing API key",
  limit: "A limit stopped the run: maxTurns, timeout, token budget, loop detected",
  sighup: "Interrupted by SIGHUP (the terminal went away)",
  sigint: "Interrupted by SIGINT (Ctrl-C)",
  sigquit: "Interrupted by SIGQUIT",
  sigterm: "Interrupted by SIGTERM",
};

const EXIT_CODES = ["Exit codes:", ...Object.entries(EXIT).map(([name, code]) => `  ${String(code).padEnd(5)}${EXIT_MEANINGS[name as keyof typeof EXIT]}`)].join("\n");

const MORE = "Every command, flag and rule: docs/cli.md, shipped in the yiem package.";

const EPILOGUE = `${ENVIRONMENT}\n\n${EXIT_CODES}\n\n${MORE}`;

const DEMO = 'yiem run -m replay:configs/demo.replay.jsonl "What time is it in Tokyo?"';

const ROOT_EXAMPLES = `Examples:
  # The offline demo in this folder (a spec, the example tools, recorded model turns), then a run:
  yiem init --example
  ${DEMO}
  # The spec's model (OpenAI needs OPENAI_API_KEY), a local server, a diff review:
  yiem run "What's the weather in Lisbon?"
  yiem run --base-url http://localhost:11434/v1 -m llama3.1:8b "Weather in Rome?"
  git diff | yiem run -c configs/review.yaml "Review this change"
  # One tool without a model; tab completion in bash (zsh: >> ~/.zshrc):
  yiem tools call getTime --args '{"city": "Tokyo"}'
  yiem completion >> ~/.bashrc`;

const RUN_EXAMPLES = `Examples:
  ${DEMO}   # offline, no key
  yiem run --base-url http://localhost:11434/v1 -m llama3.1:8b "Weather in Rome?"
  git diff | yiem run -c configs/review.yaml "Review this change" > review.md
  yiem run --output json --events ndjson --timeout 2m "…" > result.json 2>> events.ndjson
  yiem run --dry-run -c configs/weather.yaml "hi"   # the resolved spec and first request; no model`;

/** Examples, environment and exit codes after the options of `yiem --help`. */
export function withRootHelp<T>(y: Argv<T>): Argv<T> {
  return y.epilogue(`${ROOT_EXAMPLES}\n\n${EPILOGUE}`);
}

/** Examples, environment and exit codes after the options of `yiem run --help`. */
export function withRunHelp<T>(y: Argv<T>): Argv<T> {
  return y.epilogue(`${RUN_EXAMPLES}\n\n${EPILOGUE}`);
}
