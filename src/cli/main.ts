/**
 * The `yiem` entry point. Start-up rule: this file imports only what argument parsing needs;
 * every command module (and with it openai, ajv, execa, sucrase) is imported when the command runs.
 * `yiem --version` is answered by bin/yiem.js before this file loads.
 */
import { releaseChannels } from "../channels/guard.js";
import { reportUsageError } from "./errors.js";
import type { CliIo } from "./io.js";
import { EXIT } from "./exit-codes.js";
import { parseWithYargs, type Parsed } from "./command-line.js";
import { cachedParse } from "./parse-cache.js";
import { STDIN_MARK } from "./stdin-mark.js";
import { graceVariableProblem } from "../grace-ms.js";
import { armExitBound } from "./bounded-exit.js";
import { BATCH_BOOLEAN_FLAGS, commandWordIndex, commandWordOf, RUN_BOOLEAN_FLAGS, takesValue } from "./command-word.js";


type Handler = (argv: Record<string, unknown>, io: CliIo) => Promise<number>;

/**
 * The command modules, imported only when their command runs. yargs parses and validates, then
 * `main` dispatches: giving yargs the handlers would make it render and cache the whole help text
 * after starting each one (~15 ms of every call).
 */
const COMMANDS: Record<string, () => Promise<{ handler: Handler }>> = {
  run: () => import("./commands/run.js"),
  config: () => import("./commands/config.js"),
  init: () => import("./commands/init.js"),
  doctor: () => import("./commands/doctor.js"),
  tools: () => import("./commands/tools.js"),
  mcp: () => import("./commands/mcp.js"),
  // Its own entry: the stdio channel starts before anything else of MCP loads (mcp-serve.ts).
  "mcp serve": () => import("./commands/mcp-serve.js"),
  sessions: () => import("./commands/sessions.js"),
  batch: () => import("./commands/batch.js"),
  "batch merge": () => import("./commands/batch-merge.js"),
};

/**
 * Runs one `yiem` command line against `io` (./io.ts) and returns its exit code. It never ends
 * the process: bin/yiem.js exits with the code (see ./host/process-io.ts for the real io).
 */
export async function main(args: string[], io: CliIo): Promise<number> {
  try {
    return await runCommandLine(args, io);
  } finally {
    // The channel guard a command installed (../channels/guard.ts) is the process's: an
    // in-process call hands it back; the real process keeps it until it exits.
    if (io.host.releasesChannels) releaseChannels();
  }
}

async function runCommandLine(args: string[], io: CliIo): Promise<number> {
  if (args[0] === "completion" || args[0] === "__complete") {
    const { completionCommand } = await import("./completion/command.js");
    return completionCommand(args, io);
  }
  // `yiem run … -- WORDS`: every word after `--` is a prompt word, never a flag (yargs drops them).
  const { options: optionArgs, rest: promptAfterDashes } = splitAtDashes(args);
  args = bareAgentFlag(optionArgs);
  const yargsArgs = joinDashValues(args);
  const cached = cachedParse(yargsArgs);
  const parsed: Parsed = cached ? { kind: "command", argv: cached } : await parseWithYargs(args, yargsArgs, io);
  if (parsed.kind === "usage") return failUsage(io, args, parsed.message);
  if (parsed.kind === "printed") return EXIT.ok;
  const argv = parsed.argv;
  keepNumberText(argv, args);
  if (promptAfterDashes) argv["--"] = promptAfterDashes;
  const words = (argv._ as unknown[]).map(String);
  const load = COMMANDS[(words[0] === "mcp" && words[1] === "serve") || (words[0] === "batch" && words[1] === "merge") ? `${words[0]} ${words[1]}` : words[0]];
  // yargs' strict mode rejects unknown commands before this point.
  if (!load) return failUsage(io, args, `unknown command "${String((argv._ as unknown[])[0])}" (see --help)`);
  const badGrace = graceVariableProblem(io.env);
  if (badGrace !== undefined) return failUsage(io, args, badGrace);
  const { handler } = await load();
  // A command whose promise can never settle (its event loop ran dry) fails instead of exiting 0;
  // commands with an event stream register their own, more precise watcher (see host/drain.ts).
  const { DRAINED_HINT } = await import("./host/drain.js");
  const stopWatching = io.host.onEventLoopDrained(() => {
    reportUsageError(io, `the command stopped before it finished: ${DRAINED_HINT}`, usageErrorFormat(args, io), jsonResult(args, EXIT.failure));
    io.host.exitNow(EXIT.failure);
  });
  try {
    // Handlers flush stdout and stderr before returning, so exiting with the code cannot lose
    // output, and a tool that ignored its abort signal cannot keep a finished run alive.
    const code = await handler(argv, io);
    // Tool or hook code may have run (`tools call`, `batch`, `mcp serve`, a tool module's top
    // level in `tools list`): it cannot hold the exit either, nor change its code
    // (./bounded-exit.ts). `run` arms its own, before its last events drain.
    if (words[0] !== "run") armExitBound(code, io, true);
    return code;
  } finally {
    // A thrown error is reported by bin/yiem.js as an internal error (exit 1); a drained loop is not the cause.
    stopWatching();
  }
}

/**
 * For `yiem run`: the arguments before the first `--`, and the words after it (prompt words
 * whatever they look like: `--- a/file`, `-5 is cold?`, `-`). Other commands take no free text.
 * A lone `-` before `--` (not a flag's value) is the stdin word: yargs would drop it, so it is
 * passed on as STDIN_MARK, which no real argument can equal (argv strings cannot hold NUL).
 */
function splitAtDashes(args: string[]): { options: string[]; rest?: string[] } {
  // `yiem batch - -o …`: the input is stdin.
  const command = commandWordOf(args);
  if (command === "batch") return { options: args.map((arg, i, all) => (arg === "-" && !takesValue(all[i - 1], BATCH_BOOLEAN_FLAGS) ? STDIN_MARK : arg)) };
  if (command !== "run") return { options: args };
  const at = args.indexOf("--");
  const options = (at < 0 ? args : args.slice(0, at)).map((arg, i, all) =>
    arg === "-" && !takesValue(all[i - 1], RUN_BOOLEAN_FLAGS) ? STDIN_MARK : arg);
  return at < 0 ? { options } : { options, rest: args.slice(at + 1) };
}



/**
 * The number flags of every command (`run`, `config`, `doctor`, `batch`; typed so that help says [number]) keep the
 * text as typed, under their long name: the checks quote it in their errors (`--temperature: …
 * (got "hot")`, `--concurrency "x": …`), where yargs would have made it NaN. The last of a
 * repeated flag counts; a flag's short alias (`-j`) counts like its long name.
 */
const NUMBER_FLAGS: Record<string, string[]> = {
  "max-turns": [], temperature: [], "max-tokens": [], budget: [], "budget-usd": [], "max-retries": [], concurrency: ["-j"], rate: [],
};

function keepNumberText(argv: Record<string, unknown>, args: string[]): void {
  for (const [flag, aliases] of Object.entries(NUMBER_FLAGS)) {
    if (argv[flag] === undefined) continue;
    let text: string | undefined;
    for (let i = 0; i < args.length; i++) {
      if (args[i] === "--") break;
      for (const name of [`--${flag}`, ...aliases]) {
        if (args[i] === name) text = args[i + 1];
        else if (args[i].startsWith(`${name}=`)) text = args[i].slice(name.length + 1);
      }
    }
    if (text !== undefined) argv[flag] = text;
  }
}

/** `--args -` (stdin) as `--args=-`: yargs would otherwise read the lone `-` as a positional. */
function joinDashValues(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--args" && args[i + 1] === "-") {
      out.push("--args=-");
      i++;
    } else out.push(args[i]);
  }
  return out;
}

/**
 * `yiem mcp serve --agent` without a NAME (the last word, or followed by another flag) as
 * `--agent=`: the agent tool gets its default name instead of a "needs a value" error.
 */
function bareAgentFlag(args: string[]): string[] {
  const [command, sub] = commandWords(args);
  if (command !== "mcp" || sub !== "serve") return args;
  return args.map((arg, i) => (arg === "--agent" && (args[i + 1] === undefined || args[i + 1].startsWith("-")) ? "--agent=" : arg));
}

/**
 * How a usage error is written: `yiem run` and `yiem tools call` in ndjson mode (by --events, or by
 * default when stderr is not a TTY) keep stderr machine-readable with a lone agentEnd event;
 * any command given `--events github` writes it as one `::error::` workflow command.
 */
function usageErrorFormat(args: string[], io: CliIo): "ndjson" | "github" | "text" {
  const mode = flagValue(args, "--events");
  if (mode === "github") return "github";
  const [command, sub] = commandWords(args);
  const eventsCommand = command === "run" || (command === "tools" && sub === "call");
  if (!eventsCommand) return "text";
  return (mode ?? (io.isTTY.stderr ? "pretty" : "ndjson")) === "ndjson" ? "ndjson" : "text";
}

/** Reports the usage error `message` in the form `args` ask for (`usageErrorFormat`, `jsonResult`); the exit code. */
function failUsage(io: CliIo, args: string[], message: string): number {
  reportUsageError(io, message, usageErrorFormat(args, io), jsonResult(args, EXIT.usage));
  return EXIT.usage;
}

/** For `yiem run --output json`: a usage error still prints the one JSON result (cli/output.ts). */
function jsonResult(args: string[], exitCode: number): { exitCode: number } | undefined {
  return commandWordOf(args) === "run" && flagValue(args, "--output") === "json" ? { exitCode } : undefined;
}

/** The command word of `args` (./command-word.ts) and the word after it (`serve` of `mcp serve`). */
function commandWords(args: string[]): [string, string | undefined] {
  const at = commandWordIndex(args);
  return at < 0 ? ["", undefined] : [args[at], args[at + 1]];
}

/** The value given to `flag` (`--flag V` or `--flag=V`), read before yargs has parsed anything. */
function flagValue(args: string[], flag: string): string | undefined {
  const at = args.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
  if (at < 0) return undefined;
  return args[at].includes("=") ? args[at].slice(flag.length + 1) : args[at + 1];
}

