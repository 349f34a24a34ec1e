/**
 * The word of a command line that names its command, told before yargs runs: the first word
 * that is not an option nor the value of one of the options every command takes (`-c FILE`,
 * `--tool-dir DIR`, `--mcp-config FILE`; ./command-line.ts). `yiem -c spec.yaml tools list`
 * names `tools`. Rules:
 * - it only chooses what is kept for a line (the code cache entry, src/code-cache.ts; the kept
 *   parse, ./parse-cache.ts): a line it misreads is parsed by yargs as always, so it never
 *   changes what a command line means;
 * - "" when there is no such word (`yiem --help`).
 */

/** The options every command takes whose value may be the next word. */
const VALUE_OPTIONS = new Set(["-c", "--config", "--tool-dir", "--mcp-config"]);

/** The command word of `args` (rules above). */
export function commandWordOf(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") return "";
    if (VALUE_OPTIONS.has(arg)) {
      i++;
      continue;
    }
    if (!arg.startsWith("-")) return arg;
  }
  return "";
}
