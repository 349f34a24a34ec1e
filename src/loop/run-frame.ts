/**
 * One run's framing: the one place events are stamped (`runId`, `seq`, `ts`) and the one place
 * `agentEnd` is built. runAgent, `yiem tools call`, usage errors, the CLI's signal and watchdog
 * paths all end runs through a frame.
 *
 * Rules:
 * - One frame per run; `seq` starts at 1 and grows by one per event, in emission order; the
 *   common fields come first on every NDJSON line (type, runId, seq, ts, …).
 * - `start()` emits `agentStart`; a run may also end without one (a lone `agentEnd`: a usage
 *   error, a run stopped before its tools loaded).
 * - `end()` emits `agentEnd` exactly once: later calls do nothing and return the first outcome.
 *   Its counts default to what the frame saw (turns, tool calls of `messageEnd`s, the finished
 *   turns' usage plus the open turn's model usage) and `durationMs` to the time since `startedAt`.
 * - `close()` ends a run that cannot finish normally (it never started, or its code is stuck or
 *   waits forever): every started call without a result gets `toolExecutionEnd` (isError), every
 *   call of the open turn that never started gets `toolCallRejected`, the open turn gets
 *   `turnEnd`, then comes `agentEnd` — so `seq` stays gap-free and every call has one result.
 * - Nothing is emitted after `agentEnd`; a sink that throws is ignored (events never break a run).
 */
import type { AgentEvent, AgentEventBody, EventSink, RunFrame, RunOutcome } from "./types.js";
import type { Usage } from "../tools/types.js";
import { addUsage, zeroUsage } from "../tools/usage.js";

export interface RunFrameOptions {
  runId: string;
  /** Receives every stamped event, in order. */
  sink?: EventSink;
  /** When the run began, as a `performance.now()` time (default: now). */
  startedAt?: number;
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

/**
 * Milliseconds since `startedAt` (a `performance.now()` time), or since this call without one.
 * The default start is read from `process.hrtime`: the first use of the global `performance`
 * loads ~10 of Node's own modules (perf_hooks), which a command that only emits warnings through
 * a frame (`yiem tools list`) would pay at every start (docs/performance.md).
 */
function clockSince(startedAt: number | undefined): () => number {
  if (startedAt !== undefined) return () => performance.now() - startedAt;
  const start = process.hrtime.bigint();
  return () => Number(process.hrtime.bigint() - start) / 1e6;
}

export function createRunFrame(options: RunFrameOptions): RunFrame {
  const { runId, sink } = options;
  const elapsedMs = clockSince(options.startedAt);
  let seq = 0;
  let turns = 0;
  let toolCalls = 0;
  const usage = zeroUsage();
  let open: OpenTurn | null = null;
  let outcome: RunOutcome | null = null;

  const write = (event: AgentEvent) => {
    if (!sink) return;
    try {
      sink(event);
    } catch {
      // a broken sink must not end the run
    }
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
  const pass = (event: AgentEvent) => {
    try {
      note(event as unknown as Record<string, any>);
    } catch {
      // a malformed event is still written; only the bookkeeping skips it
    }
    write(event);
  };
  const stamp = (body: AgentEventBody): AgentEvent => stampEvent(body, runId, ++seq);
  /** The finished turns' usage plus the open turn's model usage. */
  const total = (): Usage => {
    const sum = { ...usage };
    addUsage(sum, open?.usage ?? undefined);
    return sum;
  };

  const frame: RunFrame = {
    runId,
    emit(body) {
      if (outcome) return;
      if (body.type === "agentEnd") {
        const { type: _type, ...ending } = body;
        frame.end(ending);
        return;
      }
      pass(stamp(body));
    },
    start(fields) {
      if (outcome) return;
      pass(stamp({ type: "agentStart", schemaVersion: 1, ...fields }));
    },
    relay(event) {
      if (outcome) return;
      if (event.type === "agentEnd") {
        const { type: _type, runId: _runId, seq: endSeq, ts: _ts, ...ending } = event;
        seq = Math.max(seq, endSeq - 1);
        frame.end(ending);
        return;
      }
      if (typeof event.seq === "number") seq = Math.max(seq, event.seq);
      pass(event);
    },
    end(ending) {
      if (outcome) return outcome;
      const { stopReason, error, turns: endTurns, toolCalls: endCalls, usage: endUsage, durationMs, ...rest } = ending;
      outcome = {
        stopReason,
        turns: endTurns ?? turns,
        toolCalls: endCalls ?? toolCalls,
        usage: endUsage ? { ...endUsage } : total(),
        durationMs: durationMs ?? Math.round(elapsedMs()),
        ...(error !== undefined ? { error } : {}),
        ...rest,
      };
      open = null;
      write(stamp({ type: "agentEnd", ...outcome }));
      return outcome;
    },
    close(stopReason, error) {
      if (outcome) return outcome;
      const turn = open as OpenTurn | null;
      if (turn) {
        for (const [toolCallId, { toolName, startedAt: callStart }] of turn.running) {
          turn.done.add(toolCallId);
          write(stamp({
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
          write(stamp({ type: "toolCallRejected", turn: turn.turn, toolCallId: call.id, toolName: call.name, args: call.arguments, reason: `Not executed: ${error}` }));
        }
        write(stamp({ type: "turnEnd", turn: turn.turn, toolResults: turn.calls.length, usage: turn.usage ?? zeroUsage() }));
      }
      // The open turn's model usage is counted once: in the total, with the turn closed above.
      const ending = { stopReason, error, usage: total() };
      return frame.end(ending);
    },
    get ended() {
      return outcome !== null;
    },
    get outcome() {
      return outcome;
    },
  };
  return frame;
}

/** Event bodies stamped one after the other (`seq` 1, 2, 3 …) for `runId`: the frame's stamping, for callers that build a stream by hand (tests, fixtures). */
export function createEventStamper(runId: string): (body: AgentEventBody) => AgentEvent {
  let seq = 0;
  return (body) => stampEvent(body, runId, ++seq);
}

function stampEvent(body: AgentEventBody, runId: string, seq: number): AgentEvent {
  return Object.assign({ type: body.type, runId, seq, ts: isoNow() }, body) as AgentEvent;
}

let lastMs = Number.NaN;
let lastIso = "";

/** `new Date().toISOString()`, formatted once per millisecond (bursts of events share one). */
function isoNow(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastIso = new Date(now).toISOString();
  }
  return lastIso;
}
