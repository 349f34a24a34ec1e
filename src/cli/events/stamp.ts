/**
 * Turning event bodies into stamped events: the one place `runId`, `seq` and `ts` are assigned.
 * Rules: one stamper per run; `seq` starts at 1 and grows by one per call, in call order.
 */
import type { AgentEvent, AgentEventBody } from "../../loop/types.js";

export type EventStamper = (body: AgentEventBody) => AgentEvent;

/** Returns a function that stamps each body with `runId`, the next `seq` (from 1) and the current time. */
export function createEventStamper(runId: string): EventStamper {
  let seq = 0;
  // Key order puts the common fields first on every NDJSON line: type, runId, seq, ts, …
  return (body) => Object.assign({ type: body.type, runId, seq: ++seq, ts: new Date().toISOString() }, body) as AgentEvent;
}

/** Alias of {@link createEventStamper}. */
export const stampEvents = createEventStamper;
