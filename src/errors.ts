/**
 * The kinds of failure yiem reports, for every layer: an error says what kind it is, and the CLI
 * maps the kind to an exit code in one place (cli/exit-codes.ts `exitCodeForError`), never by
 * the error's name.
 *
 * - `usage`: how yiem was called (flags, prompt, files named on the command line); exit 2.
 * - `config`: the spec or another configuration file; exit 2.
 * - `runtime`: anything that failed while working (a model, a tool, a server, a write); exit 1.
 *   An error that is not a YiemError counts as runtime.
 * - `limit`: a limit of the run was reached (turns, time, tokens); exit 3.
 * - `signal`: a signal ended the work; exit 128 + the signal's number.
 */
export type ErrorKind = "usage" | "config" | "runtime" | "limit" | "signal";

/** An error that knows its kind (see module rules). */
export class YiemError extends Error {
  /** For kind `signal`: the signal. */
  readonly signal?: NodeJS.Signals;
  constructor(message: string, readonly kind: ErrorKind, options: { cause?: unknown; signal?: NodeJS.Signals } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.signal = options.signal;
  }
}

/** A problem with how yiem was called (flags, prompt, files named on the command line). */
export class UsageError extends YiemError {
  override readonly name: string = "UsageError";
  constructor(message: string) {
    super(message, "usage");
  }
}

/** The kind of anything thrown: its own when it is a YiemError, else `runtime`. */
export function errorKindOf(error: unknown): ErrorKind {
  return error instanceof YiemError ? error.kind : "runtime";
}
