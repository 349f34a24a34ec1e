/** User-facing errors of the CLI: a usage or config problem is exit 2 with one clear line. */

/** A problem with how yiem was called (flags, prompt, files named on the command line). */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** Writes a usage error to stderr, the one place outside the event sink allowed to (before any run). */
export function reportUsageError(message: string, showHelp?: () => void): void {
  process.stderr.write(`yiem: ${message}\n`);
  if (showHelp && !process.env.YIEM_NO_USAGE_HELP) process.stderr.write("Run with --help for usage.\n");
}
