/**
 * What `--help` shows beyond the flags: examples, the environment variables yiem reads and the
 * exit codes (kept in step with docs/cli.md by test/cli/help.test.ts). Plain strings only: this
 * module is loaded on every start-up.
 */
import type { Argv } from "yargs";
import { EXIT } from "./exit-codes.js";

const ENVIRONMENT = `Environment:
  YIEM_MODEL           The model when no --model is given (overrides the spec)
  OPENAI_BASE_URL      The server when no --base-url is given (overrides the spec)
  OPENAI_API_KEY       The API key (a spec may name another variable in model.apiKeyEnv)
  YIEM_CACHE_DIR       Where transformed tools and checked specs are cached
  YIEM_SESSION_DIR     Where stored sessions are kept (see docs/sessions.md)
  NO_COLOR, FORCE_COLOR  Colour of the pretty progress view`;

/** One line per exit code; a code added to EXIT must be described here (the type says so). */
const EXIT_MEANINGS: Record<keyof typeof EXIT, string> = {
  ok: "The model answered, or a tool ended the run",
  failure: "Runtime failure: model server error after retries, replay file used up, internal error",
  usage: "Usage or spec error: unknown flag, bad value, no prompt, invalid spec, missing API key; under --strict a load problem",
  limit: "A limit stopped the run: maxTurns, timeout, token or cost budget, loop detected, an answer cut by maxTokens, no answer valid against --output-schema",
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
  # One tool without a model; tab completion in bash (zsh, fish: yiem completion --help):
  yiem tools call getTime --args '{"city": "Tokyo"}'
  yiem completion bash >> ~/.bashrc`;

const RUN_EXAMPLES = `Examples:
  ${DEMO}   # offline, no key
  yiem run --base-url http://localhost:11434/v1 -m llama3.1:8b "Weather in Rome?"
  git diff | yiem run -c configs/review.yaml "Review this change" > review.md
  yiem run --output json --events ndjson --timeout 2m "…" > result.json 2>> events.ndjson
  yiem run --dry-run -c configs/weather.yaml "hi"   # the resolved spec and first request; no model
  yiem run --strict --dry-run "hi"                  # CI: exit 2 if a tool, hook or tool glob is broken
  yiem run --system @prompt.md --temperature 0 --set model.stream=false "…"   # spec keys from flags
  yiem run --save "My name is Ada." && yiem run --continue "What is my name?"   # a stored session`;

/** The exit codes of the commands other than `run` (docs/cli.md), with an example or two. */
const COMMAND_HELP: Record<string, string> = {
  config: exitCodes(["0", "The resolved spec was printed"], ["1", "Any other failure"], ["2", "A spec or usage error (the message names the file, line and key)"]),
  doctor: `Examples:
  yiem doctor                                               # the spec's model and server
  yiem doctor --base-url http://localhost:11434/v1 -m llama3.1:8b
  yiem doctor --json | jq .settings

${exitCodes(["0", "Tool calling works (with the spec keys it lists, if any)"], ["1", "Tool calling does not work, or the server cannot be reached"], ["2", "A spec or usage error (no model, the replay model)"])}`,
  init: exitCodes(["0", "The files were written (their paths on stdout)"], ["2", "A file already exists (nothing is written) or a usage error"]),
  tools: `Examples:
  yiem tools list
  yiem tools call getTime --args '{"city": "Tokyo"}'
  yiem tools new countWords --description "Counts the words of a text."

${exitCodes(["0", "Done (each command's --help says what it means there)"], ["1", "A tool's error result, a check problem, a failed load, a required MCP server down"], ["2", "A usage or spec error: no tools command, an unknown tool, invalid arguments"], ["130", "tools call interrupted by SIGINT (143 by SIGTERM)"])}`,
  mcp: `Examples:
  yiem mcp list --json
  yiem mcp serve -c agent.config.yaml --agent reviewer

${exitCodes(["0", "Done (each command's --help says what it means there)"], ["1", "A required MCP server did not start"], ["2", "A usage or spec error: no mcp command, a bad server entry"], ["130", "mcp serve ended by SIGINT (143 by SIGTERM)"])}`,
  sessions: `Examples:
  yiem sessions list
  yiem sessions show pr-123 --json
  yiem sessions prune --older-than 30d --dry-run

${exitCodes(["0", "Done (each command's --help says what it means there)"], ["1", "sessions rm: a session is in use by another run"], ["2", "A usage error: no sessions command, no such session, a bad --older-than"])}`,
  "tools list": exitCodes(["0", "Listed (tool files that fail to load are warnings on stderr)"], ["1", "A required MCP server did not start"], ["2", "A spec or usage error"]),
  "mcp list": `Examples:
  yiem mcp list                                # a CI preflight: exit 1 if a required server fails
  yiem mcp list --mcp-config .mcp.json --json

${exitCodes(["0", "Every required server is ready (optional ones may have failed)"], ["1", "A required MCP server did not start"], ["2", "A spec or usage error (bad entry, command not found)"])}`,
  "mcp serve": `Examples:
  yiem mcp serve -c agent.config.yaml                 # the spec's tools over stdio (register it in an MCP client)
  yiem mcp serve --agent reviewer                     # also one tool "reviewer" that runs the whole agent
  yiem mcp serve --http 8765                          # Streamable HTTP on http://127.0.0.1:8765/mcp
  MCP_TOKEN=… yiem mcp serve --http 0.0.0.0:8765 --token-env MCP_TOKEN

${exitCodes(["0", "stdin closed (stdio): calls in flight finished or were cancelled"], ["1", "A required MCP server of the spec did not start"], ["2", "A spec or usage error (bad --http, no token off loopback, a tool name taken)"], ["130", "Ended by SIGINT (129 SIGHUP, 131 SIGQUIT)"], ["143", "Ended by SIGTERM"])}`,
  "tools show": exitCodes(["0", "Shown"], ["2", "Unknown tool, or a spec or usage error"]),
  "tools call": `Examples:
  yiem tools call getTime --args '{"city": "Tokyo"}'
  echo '{"city": "Berlin"}' | yiem tools call getWeather --args - --output json

${exitCodes(["0", "The tool returned a result"], ["1", "The tool returned an error result"], ["2", "Unknown tool, invalid arguments, or a spec or usage error"], ["130", "Interrupted by SIGINT (129 SIGHUP, 131 SIGQUIT)"], ["143", "Interrupted by SIGTERM"])}`,
  "tools new": `Examples:
  yiem tools new countWords --description "Counts the words of a text."
  yiem tools new lint --command --description "Runs the linter."

${exitCodes(["0", "Written (the path on stdout)"], ["1", "The written file failed to load (the write is undone)"], ["2", "A bad or taken name, a bad schema or code, or a usage error"])}`,
  "sessions list": exitCodes(["0", "Listed (unreadable session files are named on stderr)"], ["2", "A usage error"]),
  "sessions show": exitCodes(["0", "Shown"], ["2", "No such session, an ambiguous prefix, or a broken session file (named)"]),
  "sessions rm": exitCodes(["0", "Removed (the ids on stdout)"], ["1", "A session is in use by another run (not removed)"], ["2", "No such session (nothing is removed)"]),
  "sessions prune": exitCodes(["0", "Pruned (the removed ids on stdout)"], ["2", "A bad --older-than, or a usage error"]),
  batch: `Examples:
  yiem batch -c agent.config.yaml issues.jsonl -o results.jsonl
  yiem batch issues.jsonl -o results.jsonl --resume             # after a crash or Ctrl-C: run what is left
  yiem batch issues.jsonl -o results-2.jsonl --shard 2/4        # one of 4 machines (1-based)
  yiem batch files.txt -o out.jsonl --prompt-template @review.md -j 16 --rate 600

${exitCodes(["0", "Every item ended ok"], ["1", "An item ended with an error (or a result could not be written)"], ["2", "A usage, spec or input error (a bad line names its number): nothing ran"], ["3", "Only limits stopped items (turns, timeout, budget, output schema), or --batch-timeout"], ["130", "Stopped by SIGINT (143 SIGTERM): running items recorded aborted; --resume runs them again"])}`,
  "batch merge": `Examples:
  yiem batch merge results-*.jsonl -o all.jsonl --input issues.jsonl

${exitCodes(["0", "Merged: every id once (and, with --input, every input id present)"], ["1", "An id is missing, repeated or unknown, or a line is not a result (all are named)"], ["2", "A usage error (no -o, a file that cannot be read)"])}`,
  "tools check": exitCodes(["0", "Every tool loads, every schema compiles, every program can start, every tool glob matches"], ["1", "Any problem (each printed as file: reason): the ones yiem run --strict stops on"], ["2", "A spec or usage error"]),
};

function exitCodes(...lines: Array<[string, string]>): string {
  return ["Exit codes:", ...lines.map(([code, meaning]) => `  ${code.padEnd(5)}${meaning}`)].join("\n");
}

/** `yiem completion --help` (the command is answered before yargs parses; see main.ts). */
export const COMPLETION_HELP = `yiem completion [bash|zsh|fish]

Print a shell completion script. Without a shell name: the shell $SHELL names, else bash.
The script calls yiem, so yiem must be on your PATH (a global install). Tab then completes
commands, flags, flag values, file names (-c, --record, --session, --tool-dir, @FILE) and tool
names (tools call, tools show, --allow-tools, --deny-tools).

Examples:
  yiem completion bash >> ~/.bashrc
  yiem completion zsh >> ~/.zshrc
  mkdir -p ~/.config/fish/completions && yiem completion fish > ~/.config/fish/completions/yiem.fish

Exit codes:
  0    The script was printed
  2    An unknown shell, flag or argument`;

/** Exit codes (and examples, where they help) after the options of `yiem <command> --help`. */
export function withCommandHelp<T>(y: Argv<T>, command: keyof typeof COMMAND_HELP & string): Argv<T> {
  return y.epilogue(`${COMMAND_HELP[command]}\n\n${MORE}`);
}

/** Examples, environment and exit codes after the options of `yiem --help`. */
export function withRootHelp<T>(y: Argv<T>): Argv<T> {
  return y.epilogue(`${ROOT_EXAMPLES}\n\n${EPILOGUE}`);
}

/** Examples, environment and exit codes after the options of `yiem run --help`. */
export function withRunHelp<T>(y: Argv<T>): Argv<T> {
  return y.epilogue(`${RUN_EXAMPLES}\n\n${EPILOGUE}`);
}
