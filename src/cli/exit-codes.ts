/** Process exit codes (CONTRACT §4; docs/reliability.md). */
import { constants } from "node:os";
import type { StopReason } from "../loop/types.js";
import { errorKindOf, type YiemError } from "../errors.js";

export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  limit: 3,
  sighup: 129,
  sigint: 130,
  sigquit: 131,
  sigterm: 143,
} as const;

/** 128 + the signal's number (the shell's convention): SIGHUP 129, SIGINT 130, SIGQUIT 131, SIGTERM 143. */
export function exitCodeForSignal(signal: NodeJS.Signals | null | undefined): number {
  const number = signal ? constants.signals[signal] : undefined;
  return number === undefined ? EXIT.sigint : 128 + number;
}

/** The exit code for how a run ended; `signal` names the signal that aborted it, if any. */
export function exitCodeFor(stopReason: StopReason, signal?: NodeJS.Signals | null): number {
  switch (stopReason) {
    case "completed":
    case "terminated":
      return EXIT.ok;
    case "maxTurns":
    case "timeout":
    case "budget":
    case "loopDetected":
    case "maxTokens":
    case "outputInvalid":
      return EXIT.limit;
    case "aborted":
      return exitCodeForSignal(signal);
    case "error":
      return EXIT.failure;
  }
}

/**
 * The exit code for an error that ended a command: the one mapping of error kinds
 * (../errors.ts) to codes. usage and config 2, limit 3, signal 128 + its number, anything else 1.
 */
export function exitCodeForError(error: unknown): number {
  const kind = errorKindOf(error);
  switch (kind) {
    case "usage":
    case "config":
      return EXIT.usage;
    case "limit":
      return EXIT.limit;
    case "signal":
      return exitCodeForSignal((error as YiemError).signal);
    case "runtime":
      return EXIT.failure;
  }
}
