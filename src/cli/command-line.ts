/**
 * yiem's command line as yargs knows it: every command, its flags and their help, and the parse
 * itself (`parseWithYargs`). src/cli/main.ts prepares the arguments and dispatches; yargs only
 * parses and validates (see ./main.ts for why it does not run the handlers).
 */
import type { Argv } from "yargs";
import { packageVersion } from "../package-info.js";
import { requireCjs } from "../require-cjs.js";
import type { CliIo } from "./io.js";
import { withCommandHelp, withRootHelp, withRunHelp } from "./help.js";
import { commandShape, describeUsageError, keepLastOfRepeated, missingFlagValue, type YargsOptions } from "./usage-errors.js";
import { registerBatchCommands } from "./batch-flags.js";
import { withAgentOptions, type AgentFlagTexts } from "./agent-flags.js";
import { keepParse } from "./parse-cache.js";

/**
 * yargs through its CommonJS build: a handful of bundled files instead of ~60 ES modules, which
 * halves its load time (start-up is the cost of every `yiem` call; see docs/performance.md).
 */
function loadYargs(): typeof import("yargs").default {
  return requireCjs("yargs/yargs") as typeof import("yargs").default;
}

/** `yiem run`'s wording of the flags it shares with batch (./agent-flags.ts). */
const RUN_FLAG_TEXTS: AgentFlagTexts = {
  attach: "Add a file to the prompt: text as a fenced block, png/jpeg/gif/webp as an image; - reads stdin (repeatable)",
  outputSchema: "The answer must be JSON valid against this JSON Schema (FILE, or the JSON itself); stdout prints the value",
  maxTurns: "Model turns at most",
  timeout: "Whole run: ms or 30s, 2m",
};

/** Options every command takes. */
export function withCommonOptions<T>(y: Argv<T>) {
  return y
    .option("config", { alias: "c", type: "string", describe: "Agent spec file (default: searched from the current folder up)" })
    .option("tool-dir", { type: "string", describe: "Tool folder (repeatable; replaces the spec's toolDirs)" })
    .option("debug", { type: "boolean", default: false, describe: "Show stack traces of errors; yiem run: also a debug event per HTTP request (as YIEM_DEBUG=http)" })
    .option("mcp-config", { type: "string", describe: "MCP servers from a {\"mcpServers\": {...}} JSON/YAML file, as .mcp.json (repeatable)" })
    .option("spec-mcp", { type: "boolean", describe: "Use the spec's mcpServers (default; --no-spec-mcp ignores them)" });
}

/** Flags that set spec keys (`yiem run`, and `yiem config` to see the result); see setup.ts. */
function withSpecKeyOptions<T>(y: Argv<T>) {
  return y
    .option("temperature", { type: "number", describe: "model.temperature (0 to 2)" })
    .option("max-tokens", { type: "number", describe: "model.maxTokens: the most tokens of one answer" })
    .option("budget", { type: "number", describe: "limits.maxTokens: the run's token budget, all turns together" })
    .option("budget-usd", { type: "number", describe: "limits.maxCostUsd: the run's cost budget in USD (needs model.pricing)" })
    .option("max-retries", { type: "number", describe: "model.maxRetries: retries of a failed model request" })
    .option("api-key-env", { type: "string", describe: "model.apiKeyEnv: the NAME of the variable holding the API key" })
    .option("set", { type: "string", describe: "Set any spec key: KEY.PATH=VALUE, the value read as YAML (repeatable)" });
}

/** What parsing a command line came to. */
export type Parsed =
  /** A command to run, with yargs' argv. */
  | { kind: "command"; argv: Record<string, unknown> }
  /** A usage error, worded for the user (not yet reported). */
  | { kind: "usage"; message: string }
  /** Help, the version or the completion script: printed to stdout already. */
  | { kind: "printed" };

/**
 * yargs' parse of `yargsArgs` (`args` as main prepared them, with `--flag -value` joined): see
 * `Parsed`. A successful parse is kept for the next start (./parse-cache.ts). Throws what
 * yiem's own check inside yargs threw.
 */
export async function parseWithYargs(args: string[], yargsArgs: string[], io: CliIo): Promise<Parsed> {
  const yargs = loadYargs();
  let usageFailure: string | undefined;
  // What yiem's own code throws inside yargs (the check below) is held here and rethrown after
  // parsing, so everything `.fail` sees is a verdict of yargs itself: a usage error.
  let ownFailure: { error: unknown } | undefined;
  const cli = yargs()
    .scriptName("yiem")
    .usage("$0 <command> [options]\n\nRun LLM agents from the shell: a YAML spec in, the answer on stdout, NDJSON events on stderr.")
    .command(
      "run [prompt...]",
      "Run the agent on a prompt (words, piped stdin, or both)",
      (y) => withAgentOptions(
        withRunHelp(withSpecKeyOptions(withCommonOptions(y))).positional("prompt", { type: "string", describe: "The prompt; piped stdin is appended as context" }),
        RUN_FLAG_TEXTS,
      )
        .option("output", { type: "string", choices: ["text", "json"], default: "text", describe: "stdout format" })
        .option("events", { type: "string", choices: ["ndjson", "pretty", "github", "none"], describe: "stderr format: github writes GitHub Actions workflow commands (default: ndjson unless stderr is a TTY)" })
        .option("input-format", { type: "string", choices: ["text", "ndjson"], default: "text", describe: "stdin as text, or NDJSON OpenAI-format messages" })
        .option("record", { type: "string", describe: "Write the assistant turns to FILE in the replay format" })
        .option("session", { type: "string", describe: "Continue the conversation kept in FILE, and save it back" })
        .option("save", { type: "boolean", describe: "Save this run as a new session in the session store (--no-save: do not save)" })
        .option("continue", { type: "boolean", describe: "Continue the latest stored session of this spec in this folder" })
        .option("resume", { type: "string", describe: "Continue the stored session ID (a full id or a unique prefix)" })
        .option("fork", { type: "boolean", describe: "With --continue or --resume: save into a new session, leaving the old one unchanged" })
        .option("session-id", { type: "string", describe: "The id of the new session (letters, digits, _ and -)" })
        .option("wait", { type: "boolean", describe: "--no-wait: fail at once when another run holds the session, instead of waiting" })
        .option("stdin", { type: "boolean", describe: "Wait for stdin to end, with no grace (--no-stdin: never read it)" })
        .option("dry-run", { type: "boolean", default: false, describe: "Print the resolved spec and the first request; call no model" })
        .option("strict", { type: "boolean", describe: "For CI: exit 2 before the model is called when a tool or hook cannot load or start, or a tool glob matches nothing (--no-strict: warnings only)" }),
    )
    .command(
      "config",
      "Print the resolved spec with its sources, secrets redacted",
      (y) => withCommandHelp(withSpecKeyOptions(withCommonOptions(y)), "config")
        .option("model", { alias: "m", type: "string", describe: "Model override, as for run" })
        .option("json", { type: "boolean", default: false, describe: "Print JSON instead of YAML" }),
    )
    .command(
      "doctor",
      "Probe the model server with small requests: what works, what to set in the spec",
      (y) => withCommandHelp(withSpecKeyOptions(withCommonOptions(y)), "doctor")
        .option("model", { alias: "m", type: "string", describe: "Model name, as for run" })
        .option("base-url", { type: "string", describe: "OpenAI-compatible server base URL, as for run" })
        .option("json", { type: "boolean", default: false, describe: "Print {model, baseURL, toolCalling, checks, settings, exitCode} as JSON" }),
    )
    .command(
      "init",
      "Write a commented agent.config.yaml and a tools/ folder with an example tool",
      (y) => withCommandHelp(y, "init")
        .option("dir", { type: "string", default: ".", describe: "Folder to write into" })
        .option("example", { type: "boolean", default: false, describe: "Write the offline demo instead: the example spec and tools, and a replay file" }),
    )
    .command("tools", "List, create, show, call and check tools", (y) => registerToolsCommands(y))
    .command("mcp", "Check the spec's MCP servers (mcp list); serve its tools over MCP (mcp serve)", (y) => withCommandHelp(withCommonOptions(y), "mcp")
      .command("list", "Connect every MCP server; print its status, protocol version and tools", (s) => withCommandHelp(s, "mcp list")
        .option("json", { type: "boolean", default: false, describe: "Print {servers} as JSON" }))
      .command("serve", "Serve the spec's tools (and with --agent the agent itself) as an MCP server", (s) => withServeOptions(withCommandHelp(s, "mcp serve")))
      .demandCommand(1, "Name an mcp command: list or serve."))
    .command("sessions", "List, show, remove and prune stored sessions", (y) => registerSessionsCommands(y))
    .command("batch", "Run the agent on every line of a JSONL input: resumable, sharded, results as JSONL", (y) => registerBatchCommands(y, (s) => withSpecKeyOptions(withCommonOptions(s))))
    .command("completion [bash|zsh|fish]", "Print a shell completion script (bash, zsh, fish)")
    .check((argv, options) => {
      try {
        keepLastOfRepeated(argv as Record<string, unknown>, options as unknown as YargsOptions);
        return missingFlagValue(args, options as unknown as YargsOptions) ?? true;
      } catch (error) {
        ownFailure = { error };
        return true;
      }
    }, true)
    .demandCommand(1, "Name a command: run, batch, tools, mcp, sessions, config, doctor or init (see --help).")
    .strict()
    .recommendCommands()
    .version(packageVersion())
    .alias("version", "V")
    .help()
    .alias("help", "h")
    .wrap(Math.min(110, (io.isTTY.stdout ? io.stdout.columns : undefined) || 100))
    // yargs neither exits nor prints: help, version and completion text come back as `output`
    // (written to io.stdout below), a usage problem as `usageFailure`.
    .exitProcess(false)
    .fail((message, error) => {
      // Described here, while yargs still knows which command it was parsing.
      usageFailure ??= describeUsageError(message ?? error?.message ?? "invalid usage", args, commandShape(cli));
    });
  withRootHelp(cli);
  skipHelpCache(cli);
  let output = "";
  const argv = (await cli.parseAsync(yargsArgs, {}, (_error: unknown, _argv: unknown, text: string) => {
    output = text;
  })) as Record<string, unknown>;
  if (ownFailure) throw ownFailure.error;
  if (usageFailure !== undefined) return { kind: "usage", message: usageFailure };
  if (output !== "" || (cli as unknown as { getInternalMethods(): { getHasOutput(): boolean } }).getInternalMethods().getHasOutput()) {
    // --help, --version, the completion script: yargs' text, as its own console.log would print it.
    if (output !== "") await (await import("./output.js")).printText(output, io.stdout);
    return { kind: "printed" };
  }
  keepParse(yargsArgs, argv);
  return { kind: "command", argv };
}

/**
 * yargs 17 renders the full help text after starting every command, in case the command asks for
 * it later: ~13 ms, half of its parsing time. yiem's commands never show help themselves (a usage
 * error is one line, see `.fail`), so that step is skipped; `--help` itself renders as always.
 */
function skipHelpCache(cli: object): void {
  const internals = (cli as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: unknown } } }).getInternalMethods?.();
  const usage = internals?.getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === "function") usage.cacheHelpMessage = () => {};
}

function registerToolsCommands<T>(y: Argv<T>) {
  return withCommandHelp(withCommonOptions(y), "tools")
    .command("list", "List every tool", (s) => withCommandHelp(s, "tools list")
      .option("json", { type: "boolean", default: false, describe: "Print {tools, problems} as JSON" }))
    .command(
      "new <name>",
      "Write a new tool file",
      (s) => withCommandHelp(s, "tools new")
        .positional("name", { type: "string", demandOption: true, describe: "The new tool's name: a letter, then letters, digits, _ or - (64 at most)" })
        .option("label", { type: "string", describe: "Human name (default: the tool name)" })
        .option("description", { type: "string", describe: "What the tool does, for the model" })
        .option("schema", { type: "string", describe: "Input schema: JSON or @file" })
        .option("code", { type: "string", describe: "Body of execute: JS/TS or @file" })
        .option("parallel", { type: "boolean", describe: "parallelToolExecute (default true; --no-parallel)" })
        .option("command", { type: "boolean", default: false, describe: "Scaffold a command tool manifest and script" })
        .option("dir", { type: "string", describe: "Folder to write into (default: the spec's writeToolDir if set, else the first tool folder)" })
        .option("force", { type: "boolean", default: false, describe: "Replace an existing file of that name, even one yiem did not write" }),
    )
    .command("show <name>", "Print a tool's definition as JSON", (s) => withCommandHelp(s, "tools show")
      .positional("name", { type: "string", demandOption: true, describe: "The tool's name" }))
    .command(
      "call <name>",
      "Validate and run one tool without a model",
      (s) => withCommandHelp(s, "tools call")
        .positional("name", { type: "string", demandOption: true, describe: "The tool's name" })
        .option("args", { type: "string", describe: "Arguments: JSON, @file, or - for stdin (default: {})" })
        .option("events", { type: "string", choices: ["ndjson", "pretty", "github", "none"], describe: "stderr format: github writes GitHub Actions workflow commands (default: ndjson unless stderr is a TTY)" })
        .option("output", { type: "string", choices: ["text", "json"], default: "text", describe: "stdout: the result's text, or {content, details, isError}" }),
    )
    .command("check", "Load every tool and compile every schema", (s) => withCommandHelp(s, "tools check"))
    .demandCommand(1, "Name a tools command: list, new, show, call or check.");
}

/** `yiem mcp serve`'s own options (docs/mcp.md, "Serving"). */
function withServeOptions<T>(y: Argv<T>) {
  return y
    .option("http", { type: "string", describe: "Serve Streamable HTTP on [HOST:]PORT (HOST default 127.0.0.1) instead of stdio" })
    .option("token-env", { type: "string", describe: "HTTP: the NAME of the variable holding the bearer token (required off loopback)" })
    .option("allow-origin", { type: "string", describe: "HTTP: a browser Origin hostname to accept besides loopback (repeatable)" })
    .option("agent", { type: "string", describe: "Also serve the agent itself as one tool, named NAME (default: agent)" })
    .option("allow-tools", { type: "string", describe: "Comma-separated name globs to allow (repeatable)" })
    .option("deny-tools", { type: "string", describe: "Comma-separated name globs to deny; deny wins (repeatable)" })
    .option("tool-timeout", { type: "string", describe: "Per tool call: ms or 30s, 2m" })
    .option("events", { type: "string", choices: ["ndjson", "github", "none"], default: "ndjson", describe: "stderr format: github writes GitHub Actions workflow commands" })
    .option("strict", { type: "boolean", describe: "Exit 2 before serving when a tool or hook cannot load or start" });
}

function registerSessionsCommands<T>(y: Argv<T>) {
  return withCommandHelp(y, "sessions")
    .command("list", "List the stored sessions, latest first", (s) => withCommandHelp(s, "sessions list")
      .option("json", { type: "boolean", default: false, describe: "Print {dir, sessions, problems} as JSON" }))
    .command("show <id>", "Print a session's conversation (pretty on a terminal, JSON otherwise)", (s) => withCommandHelp(s, "sessions show")
      .positional("id", { type: "string", demandOption: true, describe: "The session's id or a unique prefix" })
      .option("json", { type: "boolean", default: false, describe: "Print the session file's JSON, also on a terminal" }))
    .command("rm <ids...>", "Remove sessions", (s) => withCommandHelp(s, "sessions rm")
      .positional("ids", { type: "string", array: true, demandOption: true, describe: "Full session ids" }))
    .command("prune", "Remove the sessions not updated for a while", (s) => withCommandHelp(s, "sessions prune")
      .option("older-than", { type: "string", demandOption: true, describe: "Age since the last update: 30d, 12h, 90m" })
      .option("dry-run", { type: "boolean", default: false, describe: "Print what would be removed; remove nothing" }))
    .demandCommand(1, "Name a sessions command: list, show, rm or prune.");
}
