/** A problem with how yiem was called (flags, prompt, files named on the command line): exit 2 with one clear message. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
