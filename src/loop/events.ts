/** Stamping event bodies with the run id, a sequence number from 1 and an ISO timestamp. */
import type { AgentEvent, AgentEventBody, EventSink } from "./types.js";

export type Emit = (body: AgentEventBody) => void;

/** An emitter for one run. A sink that throws is ignored: events must never break a run. */
export function createEmitter(runId: string, sink: EventSink | undefined): Emit {
  let seq = 0;
  return (body) => {
    if (!sink) return;
    const { type, ...fields } = body;
    const event = { type, runId, seq: ++seq, ts: new Date().toISOString(), ...fields } as AgentEvent;
    try {
      sink(event);
    } catch {
      // a broken sink must not end the run
    }
  };
}
