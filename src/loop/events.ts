/**
 * What the loop's parts emit through: event bodies, stamped and framed by the run's frame
 * (./run-frame.ts, the one place `runId`, `seq` and `ts` are assigned).
 */
import type { AgentEventBody } from "./types.js";

export type Emit = (body: AgentEventBody) => void;
