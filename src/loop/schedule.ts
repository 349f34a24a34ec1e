/**
 * Running one turn's tool calls. `sequential`: prepare then execute each call in order, one at a
 * time (`parallelToolExecute: true` does not make calls overlap here; only parallel mode reads it).
 * `parallel`: prepare all in order, then execute concurrently up to `maxConcurrency`; a call to a
 * tool with `parallelToolExecute: false` runs alone (after earlier calls finish, before later
 * ones start). Results always come back in call order, one per call, also on abort.
 */
import type { ToolCall } from "../provider/types.js";
import { textContent } from "../tools/define.js";
import type { Emit } from "./events.js";
import { executeToolCall, type ExecuteContext, type FinishedCall } from "./execute.js";
import { prepareToolCall, type PrepareContext, type PreparedCall } from "./prepare.js";
import type { ToolExecutionMode } from "./types.js";

export interface BatchContext extends PrepareContext, ExecuteContext {
  mode: ToolExecutionMode;
  maxConcurrency: number;
  emit: Emit;
}

export async function runToolCalls(calls: ToolCall[], ctx: BatchContext): Promise<FinishedCall[]> {
  if (ctx.mode === "sequential") {
    const finished: FinishedCall[] = [];
    for (const call of calls) {
      finished.push(ctx.signal.aborted ? skipped(call, ctx) : await settle(await prepareToolCall(call, ctx), ctx));
    }
    return finished;
  }

  const prepared: PreparedCall[] = [];
  for (const call of calls) prepared.push(await prepareToolCall(call, ctx));
  const results: Array<Promise<FinishedCall>> = [];
  const running = new Set<Promise<unknown>>();
  for (const item of prepared) {
    if (item.kind === "rejected") {
      results.push(settle(item, ctx));
      continue;
    }
    const exclusive = item.tool.parallelToolExecute === false;
    if (exclusive) await Promise.all(running);
    else while (running.size >= Math.max(1, ctx.maxConcurrency)) await Promise.race(running);
    const task = ctx.signal.aborted ? Promise.resolve(skipped(item.toolCall, ctx)) : settle(item, ctx);
    results.push(task);
    const tracked = task.finally(() => running.delete(tracked));
    running.add(tracked);
    if (exclusive) await task;
  }
  return Promise.all(results);
}

async function settle(item: PreparedCall, ctx: BatchContext): Promise<FinishedCall> {
  if (item.kind === "rejected") return rejectCall(item.toolCall, item.args, item.reason, ctx);
  return executeToolCall(item, ctx);
}

/** Result for a call that was never started because the run was already stopping. */
function skipped(call: ToolCall, ctx: BatchContext): FinishedCall {
  return rejectCall(call, call.arguments, "Not executed: the run was aborted before this call started.", ctx);
}

/** Emits toolCallRejected and returns the error result the model will see. */
export function rejectCall(call: ToolCall, args: unknown, reason: string, ctx: { turn: number; emit: Emit }): FinishedCall {
  ctx.emit({ type: "toolCallRejected", turn: ctx.turn, toolCallId: call.id, toolName: call.name, args, reason });
  return { toolCall: call, result: { content: [textContent(reason)] }, isError: true };
}
