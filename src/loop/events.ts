/**
 * What the loop's parts emit through: event bodies, stamped and framed by the run's frame
 * (./run-frame.ts, the one place `runId`, `seq` and `ts` are assigned).
 */
import type { AgentEventBody, EventSink } from "./types.js";
import { createRunFrame } from "./run-frame.js";

export type Emit = (body: AgentEventBody) => void;

export { createEventStamper } from "./run-frame.js";

/**
 * An emitter over a new frame for `runId` (kept for callers of the earlier API): it is the frame's
 * `emit`, so an `agentEnd` body still ends the run through the frame, once.
 */
export function createEmitter(runId: string, sink: EventSink | undefined): Emit {
  return createRunFrame({ runId, sink }).emit;
}
