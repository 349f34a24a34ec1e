/**
 * The word of a command line that names its command, told before yargs runs: the first word
 * that is not an option nor the value of one of the options every command takes (`-c FILE`,
 * `--tool-dir DIR`, `--mcp-config FILE`; ./command-line.ts). `yiem -c spec.yaml tools list`
 * names `tools`. Rules:
 * - it only chooses what is kept for a line (the code cache entry, src/code-cache.ts; the kept
 *   parse, ./parse-cache.ts): a line it misreads is parsed by yargs as always, so it never
 *   changes what a command line means. The value of another option before the command
 *   (`--model tools run …`) is misread as the word: that line then uses another command's code
 *   cache entry, and its parse is not kept (yargs' verdict, `run`, must equal the word);
 * - "" when there is no such word (`yiem --help`);
 * - main.ts prepares a line by it too (`run`'s words after `--`, `mcp serve --agent`), so
 *   `yiem -c spec.yaml run -- -5 is cold` reads as `yiem run -c spec.yaml -- -5 is cold`.
 */

/** The options every command takes whose value may be the next word. */
const VALUE_OPTIONS = new Set(["-c", "--config", "--tool-dir", "--mcp-config"]);

/** Where the command word of `args` is (rules above); -1 when there is none. */
export function commandWordIndex(args: readonly string[]): number {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") return -1;
    if (VALUE_OPTIONS.has(arg)) {
      i++;
      continue;
    }
    if (!arg.startsWith("-")) return i;
  }
  return -1;
}

/** The command word of `args` (rules above). */
export function commandWordOf(args: readonly string[]): string {
  const at = commandWordIndex(args);
  return at < 0 ? "" : args[at];
}

/** `flags` with the `--no-` form of each long one. */
export function booleanFlags(flags: readonly string[]): ReadonlySet<string> {
  return new Set(flags.flatMap((flag) => (flag.startsWith("--") ? [flag, `--no-${flag.slice(2)}`] : [flag])));
}

/** The boolean flags of every command (./command-line.ts withCommonOptions, and yargs' own). */
const COMMON_BOOLEAN_FLAGS = ["--debug", "--spec-mcp", "--help", "-h", "--version", "-V"];

/** `yiem run`'s flags that take no value; every other flag's next word is its value (test/cli/boolean-flags.test.ts holds the list to yargs' definition of run). */
export const RUN_BOOLEAN_FLAGS = booleanFlags([...COMMON_BOOLEAN_FLAGS, "--dry-run", "--stdin", "--strict", "--save", "--continue", "--fork", "--wait"]);

/** `yiem batch`'s flags that take no value (./batch-flags.ts; held to yargs' definition by the same test). */
export const BATCH_BOOLEAN_FLAGS = booleanFlags([...COMMON_BOOLEAN_FLAGS, "--strict", "--resume", "--skip-bad-lines", "--check", "--full-check"]);

/**
 * Whether the word after `previous` is its value: `previous` is a flag that is not one of
 * `booleans` and does not hold its value already (`--flag=value`, a short flag with more after
 * it: `-j16`).
 */
export function takesValue(previous: string | undefined, booleans: ReadonlySet<string>): boolean {
  if (previous === undefined || !previous.startsWith("-") || previous === "-" || previous.includes("=")) return false;
  if (!previous.startsWith("--") && previous.length > 2) return false;
  return !booleans.has(previous);
}
