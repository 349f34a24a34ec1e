/**
 * `yiem completion [bash|zsh|fish]` and the hidden `yiem __complete WORD...` its scripts call,
 * answered before yargs loads (a completion must be quick). Without a shell name the script is
 * for the shell $SHELL names, else bash; `--help` describes the command; any other word or flag
 * is a usage error (exit 2).
 */
import { basename } from "node:path";
import { ownWrite } from "../../channels/guard.js";
import { reportUsageError } from "../errors.js";
import { EXIT } from "../exit-codes.js";
import { COMPLETION_HELP } from "../help.js";
import type { CliIo } from "../io.js";
import { SHELLS, type Shell } from "./words.js";

/** Runs `args` (starting with `completion` or `__complete`); returns the exit code. */
export async function completionCommand(args: string[], io: CliIo): Promise<number> {
  if (args[0] === "__complete") {
    const { complete, formatCompletion } = await import("./complete.js");
    const text = formatCompletion(await complete(args.slice(1), io.cwd, io.env));
    await new Promise<void>((done) => ownWrite(() => io.stdout.write(text, () => done())));
    return EXIT.ok;
  }
  const rest = args.slice(1);
  if (rest.some((a) => a === "--help" || a === "-h")) {
    io.stdout.write(`${COMPLETION_HELP}\n`);
    return EXIT.ok;
  }
  const flag = rest.find((a) => a.startsWith("-"));
  const problem = flag !== undefined
    ? `unknown flag ${flag.split("=")[0]} for yiem completion (it takes only a shell: ${SHELLS.join(", ")})`
    : rest.length > 1
      ? `unexpected argument ${JSON.stringify(rest[1])} for yiem completion`
      : rest.length === 1 && !isShell(rest[0])
        ? `unknown shell ${JSON.stringify(rest[0])} for yiem completion (${SHELLS.join(", ")})`
        : undefined;
  if (problem) {
    reportUsageError(io, problem);
    return EXIT.usage;
  }
  const fromEnv = basename(io.env.SHELL ?? "");
  const shell: Shell = rest.length === 1 ? (rest[0] as Shell) : isShell(fromEnv) ? fromEnv : "bash";
  const { completionScript } = await import("./scripts.js");
  await new Promise<void>((done) => io.stdout.write(completionScript(shell), () => done()));
  return EXIT.ok;
}

function isShell(word: string): word is Shell {
  return (SHELLS as readonly string[]).includes(word);
}
