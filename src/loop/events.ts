/**
 * Stamping event bodies: the one place `runId`, `seq` and `ts` are assigned.
 * Rules: one stamper per run; `seq` starts at 1 and grows by one per event, in emission order;
 * the common fields come first on every NDJSON line (type, runId, seq, ts, …).
 */
import type { AgentEvent, AgentEventBody, EventSink } from "./types.js";

export type EventStamper = (body: AgentEventBody) => AgentEvent;
export type Emit = (body: AgentEventBody) => void;

export function createEventStamper(runId: string): EventStamper {
  let seq = 0;
  return (body) => Object.assign({ type: body.type, runId, seq: ++seq, ts: isoNow() }, body) as AgentEvent;
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

/** An emitter for one run. A sink that throws is ignored: events must never break a run. */
export function createEmitter(runId: string, sink: EventSink | undefined): Emit {
  const stamp = createEventStamper(runId);
  return (body) => {
    if (!sink) return;
    try {
      sink(stamp(body));
    } catch {
      // a broken sink must not end the run
    }
  };
}
