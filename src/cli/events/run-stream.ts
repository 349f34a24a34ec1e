/**
 * The event stream of one `yiem run`, between the run's frame and the sink.
 *
 * Rules:
 * - The stream owns the run's frame (../../loop/run-frame.ts): the loop emits through it, and
 *   `close()` is the frame's (it ends a run the loop cannot end: one that never started, or whose
 *   code is stuck or waits forever).
 * - Events pass through unchanged and in order, except the one `agentEnd`, held back until
 *   `finish()`: the answer and the side files are written first, and a failure there goes into
 *   that one `agentEnd` (never a second one).
 * - Nothing happens after the one `agentEnd`; emitting never throws.
 * - Once `sessionId` is set (the run's stored session, docs/sessions.md), `agentStart` and every
 *   `agentEnd` written carry it.
 */
import { createRunFrame } from "../../loop/run-frame.js";
import type { RunFrame, RunOutcome } from "../../loop/types.js";
import type { AgentEvent, StopReason } from "../../loop/types.js";


export interface RunStream {
  /** The run's frame: the loop and every path that ends the run outside it emit through it. */
  readonly frame: RunFrame;
  /** Passes one event already stamped for this run on (see RunFrame.relay). */
  emit(event: AgentEvent): void;
  /** True once `agentEnd` has been seen (held or written). */
  readonly ended: boolean;
  /** Ends the run from outside the loop (RunFrame.close); does nothing once it has ended. */
  close(stopReason: StopReason, error: string): void;
  /**
   * Writes the held `agentEnd`. With `failure`, its `error` names it, and a run that had
   * succeeded (`completed`, `terminated`) ends as `error`. Returns the stop reason written.
   */
  finish(failure?: string): StopReason | undefined;
  /** The `agentEnd` as held or written (with a `finish` failure merged in); null before the run ended. */
  readonly outcome: RunOutcome | null;
  /** The run's stored session, for agentStart and agentEnd (module rules). */
  sessionId: string | undefined;
}

/**
 * A failure after the loop (writing the answer or a side file) merged into how the run ended:
 * its message follows any earlier error, and a run that had succeeded (`completed`,
 * `terminated`) ends as `error`. The one rule for agentEnd and the `--output json` result.
 */
export function withFailure<T extends { stopReason: StopReason; error?: string }>(end: T, failure: string | undefined): T {
  if (failure === undefined) return end;
  const previous = typeof end.error === "string" && end.error !== "" ? `${end.error}; ` : "";
  const stopReason = end.stopReason === "completed" || end.stopReason === "terminated" ? "error" : end.stopReason;
  return { ...end, error: `${previous}${failure}`, stopReason };
}

export function createRunStream(runId: string, write: (event: AgentEvent) => void, startedAt?: number): RunStream {
  let held: (AgentEvent & { type: "agentEnd" }) | null = null;
  let written = false;
  let sessionId: string | undefined;
  const withSession = <T extends object>(event: T): T => (sessionId === undefined ? event : { ...event, sessionId });
  const safeWrite = (event: AgentEvent) => {
    try {
      write(event);
    } catch {
      // the sink absorbs failures; nothing to add here
    }
  };
  const frame = createRunFrame({
    runId,
    startedAt,
    sink: (event) => {
      if (event.type === "agentEnd") held = event;
      else safeWrite(event.type === "agentStart" ? withSession(event) : event);
    },
  });

  return {
    frame,
    emit: (event) => frame.relay(event),
    get ended() {
      return frame.ended;
    },
    close(stopReason, error) {
      frame.close(stopReason, error);
    },
    finish(failure) {
      if (!held || written) return held?.stopReason;
      written = true;
      const end: AgentEvent & { type: "agentEnd" } = withFailure(held, failure);
      held = end;
      safeWrite(withSession(end));
      return end.stopReason;
    },
    get outcome() {
      if (!held) return null;
      const { stopReason, turns, toolCalls, usage, durationMs, error } = held;
      return { stopReason, turns, toolCalls, usage, durationMs, ...(typeof error === "string" ? { error } : {}) };
    },
    get sessionId() {
      return sessionId;
    },
    set sessionId(id) {
      sessionId = id;
    },
  };
}
