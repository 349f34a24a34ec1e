/**
 * The event sink: the one object that writes to stderr during a command.
 *
 * Rules:
 * - `ndjson`: exactly one JSON object per line, one write per event (several queued lines may be
 *   joined into one write under backpressure), never dropped, also when part of it cannot be
 *   serialised (./serialize.ts); U+0085/U+2028/U+2029 are escaped, so lines split only at `\n`.
 *   Nothing else is ever written, so `log()` writes nothing in this mode (a machine-visible note
 *   must be a stamped `warning` event, because only the run's stamper may assign `seq`).
 * - `pretty`: the human view from ./pretty.ts; `log()` prints a dim, sanitised line.
 * - `github`: GitHub Actions workflow commands from ./github.ts (`::error::` for a failed run,
 *   `::warning::` for warnings, `::debug::` for the rest worth a line); `log()` is a `::notice::`.
 * - `none`: writes nothing at all.
 * - `emit` and `log` never throw (a failed stream is absorbed); `close()` flushes and resolves
 *   once everything written has been handed to the OS. `close()` never ends the stream, and the
 *   sink stays usable after it.
 */
import type { AgentEvent } from "../../loop/types.js";
import { createChunkWriter } from "./chunk-writer.js";
import { createGithubRenderer } from "./github.js";
import { createPrettyRenderer } from "./pretty.js";
import { escapeJsonForTerminal } from "./sanitize.js";
import { serializeEvent } from "./serialize.js";
import { shouldUseColor } from "./style.js";
import type { CliIo } from "../io.js";

export type EventsMode = "ndjson" | "pretty" | "github" | "none";

export const EVENTS_MODES: readonly EventsMode[] = ["ndjson", "pretty", "github", "none"];

export interface EventSinkOptions {
  mode: EventsMode;
  /** Where the events go: the call's stderr (../io.ts). */
  stream: NodeJS.WritableStream;
  /** The io host's exit hook: events still collected then are written synchronously. */
  onExit?: (callback: () => void) => unknown;
  /** Default: the stream's own `isTTY`. */
  isTTY?: boolean;
  /** Default: see `shouldUseColor` (TTY, NO_COLOR, FORCE_COLOR, TERM=dumb). */
  color?: boolean;
  /** Environment for the colour decision (NO_COLOR, FORCE_COLOR, TERM); default none: colour on a TTY. */
  env?: NodeJS.ProcessEnv;
  /** Terminal width for the pretty status line (default: the stream's `columns`, else 80). */
  columns?: number;
}

export interface CliEventSink {
  /** Writes one event. Safe to pass as the loop's `onEvent` (it is bound). */
  emit(event: AgentEvent): void;
  /** A human note: printed in `pretty`, dropped in `ndjson` and `none`. */
  log(message: string): void;
  /** Flushes; resolves when everything written has drained. */
  close(): Promise<void>;
}

/** The default `--events` mode: `pretty` when the stream is a TTY, `ndjson` otherwise. */
export function defaultEventsMode(stream: NodeJS.WritableStream): EventsMode {
  return isTTYStream(stream) ? "pretty" : "ndjson";
}

export function createEventSink(options: EventSinkOptions): CliEventSink {
  const stream = options.stream;
  if (options.mode === "none") {
    return { emit() {}, log() {}, close: () => Promise.resolve() };
  }
  const isTTY = options.isTTY ?? isTTYStream(stream);
  const writer = createChunkWriter(stream, { onExit: options.onExit });

  if (options.mode === "ndjson") {
    // On a terminal, C1 controls inside strings are escaped too (JSON.stringify leaves them raw).
    // serializeEvent never throws and already escapes U+0085/U+2028/U+2029.
    const finish = isTTY ? (json: string) => escapeJsonForTerminal(json) + "\n" : (json: string) => json + "\n";
    return {
      emit(event) {
        writer.write(finish(serializeEvent(event)));
      },
      log() {},
      close: () => writer.flush(),
    };
  }

  if (options.mode === "github") {
    return rendererSink(createGithubRenderer({ writer, env: options.env }), writer);
  }

  const columns = () => options.columns ?? (stream as { columns?: number }).columns;
  const renderer = createPrettyRenderer({
    writer,
    isTTY,
    color: options.color ?? shouldUseColor(isTTY, options.env ?? {}),
    columns,
  });
  return rendererSink(renderer, writer);
}

/**
 * The sink of a renderer (pretty, github): a malformed event must not crash the run, so an event
 * the renderer cannot draw is skipped; closing closes the renderer, then flushes.
 */
function rendererSink(
  renderer: { render(event: AgentEvent): void; note(message: string): void; close?(): void },
  writer: { flush(): Promise<void> },
): CliEventSink {
  return {
    emit(event) {
      try {
        renderer.render(event);
      } catch {
        // skipped (see above)
      }
    },
    log(message) {
      renderer.note(message);
    },
    close() {
      renderer.close?.();
      return writer.flush();
    },
  };
}

function isTTYStream(stream: NodeJS.WritableStream): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

/** The sink of one CLI call: `mode` (default: by whether io's stderr is a TTY) on io's stderr. */
export function createCallSink(io: Pick<CliIo, "stderr" | "isTTY" | "env" | "host">, mode: EventsMode = defaultModeOf(io)): CliEventSink {
  return createEventSink({ mode, stream: io.stderr, isTTY: io.isTTY.stderr, env: io.env, onExit: (callback) => io.host.onExit(callback) });
}

/** The default `--events` mode of a call: `pretty` when its stderr is a TTY, `ndjson` otherwise. */
export function defaultModeOf(io: Pick<CliIo, "isTTY">): EventsMode {
  return io.isTTY.stderr ? "pretty" : "ndjson";
}
