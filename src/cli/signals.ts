/**
 * Signals during a command. Rules:
 * - SIGINT, SIGTERM, SIGHUP and SIGQUIT are handled alike: the first one aborts the run (tools get
 *   their abort signal, command tools' process groups are killed, the run still ends with
 *   `agentEnd` aborted and exit 128 + the signal's number: 130, 143, 129, 131); this holds from
 *   the moment the handlers are installed, also while tools load and stdin is read.
 * - A second one runs the `beforeForcedExit` callbacks (kill child groups, close the event
 *   stream) and exits at once with the first signal's code.
 * - The signals come from `io.signals` (../io.ts): the real process's, or a test's emitter. The
 *   handlers stay installed for the rest of the call (a signal while the result is flushed still
 *   ends it with its code); the forced-exit callbacks belong to this one call, never to the next.
 */
import { exitCodeForSignal } from "./exit-codes.js";
import type { CliIo, CliSignal } from "./io.js";

/** The signals that end a run. */
const HANDLED_SIGNALS: readonly CliSignal[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];

export interface SignalHandling {
  controller: AbortController;
  /** The first signal received, if any. */
  readonly received: NodeJS.Signals | null;
  /**
   * Handles `signal` as if it had arrived (e.g. SIGHUP when the parent process is gone), with
   * `reason` as the abort reason (default: "received SIGNAL").
   */
  raise(signal: NodeJS.Signals, reason?: unknown): void;
  /** Called with the signal on a second interrupt, just before exiting (e.g. to kill child groups). */
  beforeForcedExit(callback: (signal: NodeJS.Signals) => void): void;
}

export function installSignalHandlers(io: Pick<CliIo, "signals" | "host">): SignalHandling {
  const onForcedExit: Array<(signal: NodeJS.Signals) => void> = [];
  const controller = new AbortController();
  let received: NodeJS.Signals | null = null;
  const handle = (signal: NodeJS.Signals, reason?: unknown) => {
    if (received) {
      for (const callback of onForcedExit) {
        try {
          callback(signal);
        } catch {
          // exiting anyway
        }
      }
      io.host.exitNow(exitCodeForSignal(received));
      return;
    }
    received = signal;
    controller.abort(reason ?? new Error(`received ${signal}`));
  };
  for (const signal of HANDLED_SIGNALS) io.signals.on(signal, (received?: NodeJS.Signals) => handle(received ?? signal));
  return {
    controller,
    raise: handle,
    beforeForcedExit: (callback) => onForcedExit.push(callback),
    get received() {
      return received;
    },
  };
}
