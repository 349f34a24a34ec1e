/**
 * What the parts of one `yiem run` share (./run.ts): the context, the one way a run is stopped
 * before or outside the loop (`Interrupted`, `endFromOutside`), and waiting on work the run's
 * signal may cut short.
 */
import type { Pricing } from "../../loop/types.js";
import { RunStop, stopOf, untilAborted } from "../../loop/abort.js";
import type { StopReason } from "../../loop/types.js";
import type { CliEventSink, EventsMode } from "../events/sink.js";
import type { RunStream } from "../events/run-stream.js";
import { printResultJsonSync, unfinishedResult } from "../output.js";
import { exitCodeFor, exitCodeForSignal } from "../exit-codes.js";
import type { RunSession } from "../run-session.js";
import type { CliIo } from "../io.js";

/** What the parts of one run share. */
export interface RunContext {
  argv: Record<string, unknown>;
  /** The call's streams, environment, folder, signals and host (../io.ts). */
  io: CliIo;
  mode: EventsMode;
  sink: CliEventSink;
  stream: RunStream;
  runId: string;
  /** When the command started (`performance.now()`): durations count from here, stdin included. */
  startedAt: number;
  /** Sets what the run's events are redacted with (once the spec names the API key). */
  setRedactor(redact: import("../../redact.js").Redactor): void;
  /** Prices the run's events from now on (the spec's model.pricing; undefined: none). */
  setPricing(pricing: Pricing | undefined): void;
  /** The run's one abort signal: the command's (signals, drained event loop), then, once the spec is read, the run's scope with its deadline (run.ts). */
  signal: AbortSignal;
  abort(reason: unknown): void;
  received(): NodeJS.Signals | null;
  /** True once the result has been (or is being) printed: `--output json` prints exactly one. */
  resultPrinted: boolean;
  /** Set once the command-tool module is loaded: kills every live child process group. */
  killChildren(): void;
  /**
   * Stops the deadline timer and its watchdog; with `keepWatchdog`, the watchdog stays armed (a
   * run the deadline stopped: a tool's late timer may still spin before agentEnd is written).
   */
  stopDeadline(keepWatchdog?: boolean): void;
  /** A `warning` event once the loop has started (held until then). */
  warn(message: string): void;
  /** Warnings given before the loop started. */
  earlyWarnings: string[];
  /** Set once MCP servers are connected: closes them (stdin, wait, then the whole group). */
  closeMcp(): Promise<void>;
  /** The stored session the run reads and saves, once opened (docs/sessions.md). */
  session?: RunSession;
}

/** Thrown (inside run) when the run's signal aborts before the loop has started. */
export class Interrupted extends Error {
  constructor(readonly reason: unknown) {
    super("interrupted");
  }
}


/** The stop reason and message for the run signal's abort reason. */
export function describeStop(reason: unknown): [StopReason, string] {
  const { stopReason, message } = stopOf(reason);
  return [stopReason, message];
}

/**
 * Closes the event stream from outside the loop (run-stream.ts), kills child groups and, with
 * `--output json`, prints the result if nothing printed it yet; returns the exit code (`code`,
 * else the stop reason's).
 */
export function endFromOutside(ctx: RunContext, stopReason: StopReason, message: string, code?: number): number {
  ctx.stream.close(stopReason, message);
  ctx.stream.finish();
  try {
    ctx.killChildren();
  } catch {
    // exiting anyway
  }
  const exit = code ?? (stopReason === "aborted" ? exitCodeForSignal(ctx.received()) : exitCodeFor(stopReason));
  printUnfinished(ctx, exit);
  return exit;
}

/** With `--output json`, the result of a run that ends without the loop's own result: once, at once. */
export function printUnfinished(ctx: RunContext, exitCode: number): void {
  if (ctx.argv.output !== "json" || ctx.resultPrinted) return;
  ctx.resultPrinted = true;
  const end = ctx.stream.outcome;
  printResultJsonSync(ctx.io.stdout, unfinishedResult({ runId: ctx.runId, stopReason: "error", ...end }), exitCode, ctx.stream.sessionId ?? null);
}

/** `work`, unless the run's signal aborts first (then it throws Interrupted). */
export function unlessStopped<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return untilAborted(work, signal, () => {
    throw new Interrupted(signal.reason);
  });
}

/**
 * `work`, unless the run stops first; then the stop's message ends with `while waiting for …`
 * (`what()`, when it names something), so agentEnd says what the run was waiting for.
 */
export async function whileWaiting<T>(ctx: RunContext, work: Promise<T>, what: () => string | undefined): Promise<T> {
  try {
    return await unlessStopped(work, ctx.signal);
  } catch (error) {
    const waited = error instanceof Interrupted ? what() : undefined;
    if (waited === undefined) throw error;
    const [stopReason, message] = describeStop((error as Interrupted).reason);
    throw new Interrupted(new RunStop(stopReason === "timeout" || stopReason === "error" ? stopReason : "aborted", `${message} while waiting for ${waited}`));
  }
}
