/** Process exit codes (CONTRACT §4). */
import type { StopReason } from "../loop/types.js";

export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  limit: 3,
  sigint: 130,
  sigterm: 143,
} as const;

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
      return EXIT.limit;
    case "aborted":
      return signal === "SIGTERM" ? EXIT.sigterm : EXIT.sigint;
    case "error":
      return EXIT.failure;
  }
}
