/**
 * How `yiem run` ends (./run.ts): after the loop, the answer, the side files and the held
 * agentEnd (`finishRun`); a run that could not start or was stopped before the loop began
 * (`reportFatal`). Both return the exit code.
 */
import { secretValues } from "../../secrets.js";
import { messageOf } from "../../error-text.js";
import { createRedactor, type Redactor } from "../../redact.js";
import type { AgentEvent, AgentEventBody, RunResult, StopReason } from "../../loop/types.js";
import { reportUsageError } from "../errors.js";
import { withFailure } from "../events/run-stream.js";
import { EXIT, exitCodeFor, exitCodeForError } from "../exit-codes.js";
import { McpRequiredError } from "../../mcp/required-error.js";
import { saveSession } from "../session.js";
import { describeStop, endFromOutside, Interrupted, printUnfinished, type RunContext } from "./run-context.js";

/**
 * After the loop: the answer, then the side files, then the held agentEnd. A failed write is
 * named in agentEnd and makes a successful run exit 1; nothing after agentEnd is ever written.
 * With `--output json` the side files come first, so the one JSON result can carry the final
 * stop reason, error and exit code.
 */
export async function finishRun(ctx: RunContext, result: RunResult, redact: Redactor, recorder: { flush(): Promise<void> } | undefined): Promise<number> {
  const { argv } = ctx;
  const json = argv.output === "json";
  const failures: string[] = [];
  const { printResult } = await import("../output.js");
  const shown: RunResult = { ...result, text: redact(result.text), error: redact(result.error), ...("structured" in result ? { structured: redact(result.structured) } : {}) };
  const print = async (final: RunResult, code: number) => {
    ctx.resultPrinted = true;
    try {
      await printResult(final, json ? "json" : "text", ctx.io.stdout, code, ctx.stream.sessionId ?? null);
    } catch (error) {
      failures.push(`could not write the answer to stdout: ${messageOf(error)}`);
    }
  };
  if (!json) await print(shown, exitCodeFor(result.stopReason, ctx.received()));
  try {
    await recorder?.flush();
  } catch (error) {
    failures.push(messageOf(error));
  }
  if (argv.session !== undefined) {
    try {
      await saveSession(String(argv.session), result.messages, ctx.io.cwd);
    } catch (error) {
      failures.push(`could not write the session file ${String(argv.session)}: ${messageOf(error)}`);
    }
  }
  if (ctx.session) {
    try {
      await ctx.session.save(result);
    } catch (error) {
      failures.push(`could not save session ${ctx.session.id}, this run was not added to it: ${messageOf(error)}`);
    }
    await ctx.session.release();
  }
  const failureOf = () => (failures.length > 0 ? redact(failures.join("; ")) : undefined);
  if (json) {
    const final = withFailure(shown, failureOf());
    await print(final, exitCodeOf(ctx, result.stopReason, failureOf()));
  }
  const failure = failureOf();
  ctx.stream.finish(failure);
  if (failure !== undefined && ctx.mode === "none") reportUsageError(ctx.io, failure);
  return exitCodeOf(ctx, result.stopReason, failure);
}

/** The exit code of a run the loop ended, given a failure after it (see withFailure). */
function exitCodeOf(ctx: RunContext, stopReason: StopReason, failure: string | undefined): number {
  const succeeded = stopReason === "completed" || stopReason === "terminated";
  return failure !== undefined && succeeded ? EXIT.failure : exitCodeFor(stopReason, ctx.received());
}


/**
 * A run that could not start (or was stopped before the loop began) still ends with one
 * `agentEnd` (with `--events none`, an error is one plain line); returns the exit code.
 */
export function reportFatal(ctx: RunContext, error: unknown): number {
  const redact = createRedactor(secretValues(ctx.io.env));
  if (error instanceof Interrupted) {
    const [stopReason, message] = describeStop(error.reason);
    if (ctx.mode === "none" && stopReason === "error") reportUsageError(ctx.io, redact(message));
    return endFromOutside(ctx, stopReason, redact(message));
  }
  const message = redact(messageOf(error));
  if (ctx.mode === "none") reportUsageError(ctx.io, message);
  if (ctx.stream.ended) {
    // The loop has ended (its agentEnd is held): the failure goes into that agentEnd.
    ctx.stream.finish(message);
    printUnfinished(ctx, EXIT.failure);
    return EXIT.failure;
  }
  const mcpFailures = error instanceof McpRequiredError ? error.events : [];
  if (mcpFailures.length > 0) {
    // The servers' own reports come first; agentEnd (next seq) then names every failure.
    for (const body of mcpFailures) ctx.stream.frame.emit(redact(body));
  }
  // A usage or config problem is exit 2, anything else 1 (by the error's kind, ../exit-codes.ts).
  const code = exitCodeForError(error) === EXIT.usage ? EXIT.usage : EXIT.failure;
  endFromOutside(ctx, "error", message, code);
  if (ctx.argv.debug && error instanceof Error && error.stack) ctx.sink.log(redact(error.stack));
  return code;
}
