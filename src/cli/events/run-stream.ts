/**
 * The event stream of one `yiem run`, between the loop and the sink.
 *
 * Rules:
 * - Events pass through unchanged and in order. The stream notes what it needs to end the run
 *   itself: the last `seq`, the open turn with its tool calls and which of them have a result,
 *   and the running totals (turns, tool calls, usage).
 * - The loop's `agentEnd` is held back until `finish()`: the answer and the side files are written
 *   first, and a failure there goes into that one `agentEnd` (never a second one).
 * - `close()` ends a run the loop cannot end: one that never started (a usage error, a signal or
 *   the deadline while tools load), or whose code is stuck or waits forever. Every started call
 *   without a result gets `toolExecutionEnd` (isError), every call of the open turn that never
 *   started gets `toolCallRejected`, the open turn gets `turnEnd`, then comes `agentEnd` — so
 *   `seq` stays gap-free and every call still has exactly one result.
 * - Nothing happens after the one `agentEnd`; emitting never throws.
 * - Once `sessionId` is set (the run's stored session, docs/sessions.md), `agentStart` and every
 *   `agentEnd` written carry it.
 */
import type { AgentEvent, AgentEventBody, StopReason } from "../../loop/types.js";
import { addUsage, zeroUsage } from "../../loop/usage.js";
import type { Usage } from "../../tools/types.js";

export interface RunStream {
  /** Passes one stamped event on (holding back `agentEnd`). */
  emit(event: AgentEvent): void;
  /** True once `agentEnd` has been seen (held or written). */
  readonly ended: boolean;
  /** Ends the run from outside the loop (see module rules); does nothing once it has ended. */
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

/** How a run ended, as its `agentEnd` says. */
export type RunOutcome = Omit<Extract<AgentEventBody, { type: "agentEnd" }>, "type">;

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

interface OpenTurn {
  turn: number;
  calls: Array<{ id: string; name: string; arguments: string }>;
  /** Calls with a result (toolExecutionEnd or toolCallRejected). */
  done: Set<string>;
  /** Started calls without a result yet, with their name and start time. */
  running: Map<string, { toolName: string; startedAt: number }>;
  usage: Usage | null;
}

type Body = { type: string } & Record<string, unknown>;

export function createRunStream(runId: string, write: (event: AgentEvent) => void): RunStream {
  const startedAt = performance.now();
  let seq = 0;
  let turns = 0;
  let toolCalls = 0;
  const usage = zeroUsage();
  let open: OpenTurn | null = null;
  let held: (AgentEvent & Record<string, unknown>) | null = null;
  let ended = false;
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
  const stamp = (body: Body): AgentEvent =>
    Object.assign({ type: body.type, runId, seq: ++seq, ts: new Date().toISOString() }, body) as unknown as AgentEvent;
  /** The finished turns' usage plus the open turn's model usage. */
  const total = (): Usage => {
    const sum = { ...usage };
    addUsage(sum, open?.usage ?? undefined);
    return sum;
  };
  const note = (event: Record<string, any>) => {
    switch (event.type) {
      case "turnStart":
        turns = Math.max(turns, Number(event.turn) || 0);
        open = { turn: event.turn, calls: [], done: new Set(), running: new Map(), usage: null };
        break;
      case "messageEnd": {
        const calls = Array.isArray(event.message?.toolCalls) ? event.message.toolCalls : [];
        toolCalls += calls.length;
        if (open) {
          open.calls = calls;
          open.usage = event.usage ?? null;
        }
        break;
      }
      case "toolExecutionStart":
        open?.running.set(event.toolCallId, { toolName: event.toolName, startedAt: performance.now() });
        break;
      case "toolExecutionEnd":
      case "toolCallRejected":
        open?.running.delete(event.toolCallId);
        open?.done.add(event.toolCallId);
        break;
      case "turnEnd":
        addUsage(usage, event.usage);
        open = null;
        break;
    }
  };

  return {
    emit(event) {
      if (ended) return;
      if (typeof event.seq === "number") seq = Math.max(seq, event.seq);
      if (event.type === "agentEnd") {
        ended = true;
        held = event as AgentEvent & Record<string, unknown>;
        return;
      }
      try {
        note(event as unknown as Record<string, any>);
      } catch {
        // a malformed event is still written; only the bookkeeping skips it
      }
      safeWrite(event.type === "agentStart" ? withSession(event) : event);
    },
    get ended() {
      return ended;
    },
    close(stopReason, error) {
      if (ended) return;
      const turn = open;
      if (turn) {
        for (const [toolCallId, { toolName, startedAt: callStart }] of turn.running) {
          turn.done.add(toolCallId);
          safeWrite(stamp({
            type: "toolExecutionEnd",
            turn: turn.turn,
            toolCallId,
            toolName,
            result: { content: [{ type: "text", text: `Tool "${toolName}" was stopped: ${error}` }] },
            isError: true,
            durationMs: Math.round(performance.now() - callStart),
          }));
        }
        for (const call of turn.calls) {
          if (turn.done.has(call.id)) continue;
          safeWrite(stamp({ type: "toolCallRejected", turn: turn.turn, toolCallId: call.id, toolName: call.name, args: call.arguments, reason: `Not executed: ${error}` }));
        }
        safeWrite(stamp({ type: "turnEnd", turn: turn.turn, toolResults: turn.calls.length, usage: turn.usage ?? zeroUsage() }));
      }
      held = stamp({
        type: "agentEnd",
        stopReason,
        turns,
        toolCalls,
        usage: total(),
        durationMs: Math.round(performance.now() - startedAt),
        error,
      }) as AgentEvent & Record<string, unknown>;
      open = null;
      ended = true;
    },
    finish(failure) {
      if (!held || written) return held?.stopReason as StopReason | undefined;
      written = true;
      held = withFailure(held as AgentEvent & Record<string, unknown> & { stopReason: StopReason; error?: string }, failure);
      safeWrite(withSession(held));
      return held.stopReason as StopReason;
    },
    get outcome() {
      if (!held) return null;
      const { stopReason, turns, toolCalls, usage: used, durationMs, error } = held as unknown as RunOutcome;
      return { stopReason, turns, toolCalls, usage: used, durationMs, ...(typeof error === "string" ? { error } : {}) };
    },
    get sessionId() {
      return sessionId;
    },
    set sessionId(id) {
      sessionId = id;
    },
  };
}
