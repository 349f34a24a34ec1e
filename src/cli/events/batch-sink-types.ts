/**
 * What `yiem batch` writes its events through (one per call, on io's stderr): the batch's own
 * events, its progress, and its items' events. Made by ./batch-sink.ts (pretty, ndjson) and
 * ./github-batch.ts (github).
 */
import type { BatchEventBody } from "../../batch/events.js";
import type { AgentEvent } from "../../loop/types.js";
import type { BatchProgressBody } from "../../loop/batch-event-bodies.js";

export interface BatchSink {
  /** A batch event (stamped here). */
  batch(body: BatchEventBody): void;
  /** Progress: written when the mode's interval has passed since the last (or at once with `force`). */
  progress(body: BatchProgressBody, force?: boolean): void;
  /** An item's event, when item events are shown (`itemEvents`). */
  item(event: AgentEvent, itemId: string): void;
  /** Whether item events are written (`--events ndjson` given). */
  readonly itemEvents: boolean;
  /** A human note (pretty only; ndjson gets warnings as events). */
  note(message: string): void;
  close(): Promise<void>;
}
