/**
 * SIGINT/SIGTERM during a run: the first one aborts the run (tools get their abort signal, the run
 * still ends with `agentEnd` aborted and exit 130/143); a second one exits at once. The handlers
 * stay installed until the process exits (commands end with process.exit).
 */
import { EXIT } from "./exit-codes.js";

export interface SignalHandling {
  controller: AbortController;
  /** The first signal received, if any. */
  readonly received: NodeJS.Signals | null;
}

/** Called with the signal on a second interrupt, just before exiting (e.g. to kill child groups). */
const onForcedExit: Array<(signal: NodeJS.Signals) => void> = [];

export function beforeForcedExit(callback: (signal: NodeJS.Signals) => void): void {
  onForcedExit.push(callback);
}

export function installSignalHandlers(): SignalHandling {
  const controller = new AbortController();
  let received: NodeJS.Signals | null = null;
  const handle = (signal: NodeJS.Signals) => {
    if (received) {
      for (const callback of onForcedExit) {
        try {
          callback(signal);
        } catch {
          // exiting anyway
        }
      }
      process.exit(received === "SIGTERM" ? EXIT.sigterm : EXIT.sigint);
    }
    received = signal;
    controller.abort(new Error(`received ${signal}`));
  };
  process.on("SIGINT", handle);
  process.on("SIGTERM", handle);
  return {
    controller,
    get received() {
      return received;
    },
  };
}
