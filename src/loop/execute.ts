/**
 * Executing one prepared call: toolExecutionStart → updates from onPartialResult → finalize
 * (afterToolCall may replace content, details, isError, terminate, usage) → toolExecutionEnd.
 * A failing afterToolCall (a throw, invalid content) makes the result an error that keeps the
 * tool's own `usage` and `terminate`.
 * Rules: a throw, a rejection, a timeout, an abort or a malformed result is an error result;
 * nothing here throws. A tool that ignores its signal is left behind, never awaited.
 */
import type { ToolCall } from "../provider/types.js";
import { textContent } from "../tools/define.js";
import type { ContentPart, PartialToolResult, Tool, ToolResult, ToolRunContext } from "../tools/types.js";
import { untilAborted } from "./abort.js";
import { cutText } from "../redact.js";
import { messageOf } from "./prepare.js";
import type { Emit } from "./events.js";
import type { AgentHooks } from "./types.js";

/** Text beyond this many characters per result is cut with a marker (protects the model and memory). */
export const MAX_RESULT_CHARS = 100_000;

/** The abort reason a call's signal gets once the call has its result (one shared object: no stack capture per call). */
const CALL_FINISHED = new Error("tool call finished");

export interface FinishedCall {
  toolCall: ToolCall;
  result: ToolResult;
  isError: boolean;
}

export interface ExecuteContext {
  turn: number;
  signal: AbortSignal;
  hooks: AgentHooks;
  emit: Emit;
  /** Default per-call timeout in ms (0 = none); a tool's own `timeoutMs` wins. */
  toolTimeoutMs: number;
  /** The run's own view, passed to `execute` (e.g. listTools lists the run's offer). */
  run?: ToolRunContext;
}

export async function executeToolCall(
  call: { toolCall: ToolCall; tool: Tool; args: Record<string, unknown> },
  ctx: ExecuteContext,
): Promise<FinishedCall> {
  const { toolCall, tool, args } = call;
  const base = { turn: ctx.turn, toolCallId: toolCall.id, toolName: tool.name, ...(tool.mcp ? { mcp: tool.mcp } : {}) };
  const started = performance.now();
  ctx.emit({ type: "toolExecutionStart", ...base, args });

  let { result, isError } = await runWithLimits(call, ctx, (partial) => {
    ctx.emit({ type: "toolExecutionUpdate", ...base, partialResult: normalizePartial(partial) });
  });

  if (ctx.hooks.afterToolCall) {
    const kept: Pick<ToolResult, "usage" | "terminate"> = {
      ...(result.usage !== undefined ? { usage: result.usage } : {}),
      ...(result.terminate ? { terminate: true } : {}),
    };
    try {
      const hooked = Promise.resolve(ctx.hooks.afterToolCall({ turn: ctx.turn, toolCall, tool, args, signal: ctx.signal, result, isError }));
      const change = await untilAborted(hooked, ctx.signal, () => {
        throw new Error("the run was aborted before it finished");
      });
      if (change) {
        const normalized = change.content !== undefined ? normalizeResult({ content: change.content }) : null;
        result = {
          ...result,
          ...(normalized?.ok ? { content: normalized.result.content } : {}),
          ...("details" in change ? { details: change.details } : {}),
          ...(change.terminate !== undefined ? { terminate: change.terminate } : {}),
          ...(change.usage !== null && typeof change.usage === "object" ? { usage: change.usage } : {}),
        };
        if (change.isError !== undefined) isError = change.isError;
        if (normalized && !normalized.ok) {
          result = { content: [textContent(`afterToolCall hook returned invalid content: ${normalized.malformed}`)], ...kept };
          isError = true;
        }
      }
    } catch (error) {
      result = { content: [textContent(`afterToolCall hook failed: ${messageOf(error)}`)], ...kept };
      isError = true;
    }
  }

  ctx.emit({
    type: "toolExecutionEnd",
    ...base,
    result: { content: result.content, ...(result.details !== undefined ? { details: result.details } : {}) },
    isError,
    durationMs: Math.round(performance.now() - started),
  });
  return { toolCall, result, isError };
}

/** Runs `execute` under the call's own abort signal, its timeout and the run's signal. */
async function runWithLimits(
  call: { toolCall: ToolCall; tool: Tool; args: Record<string, unknown> },
  ctx: ExecuteContext,
  onPartial: (partial: PartialToolResult) => void,
): Promise<{ result: ToolResult; isError: boolean }> {
  const { tool, toolCall, args } = call;
  const controller = new AbortController();
  const timeoutMs = tool.timeoutMs ?? ctx.toolTimeoutMs;
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  const failure = (text: string) => ({ result: { content: [textContent(text)] }, isError: true });

  const stop = new Promise<{ result: ToolResult; isError: boolean }>((resolveStop) => {
    const onRunAbort = () => {
      controller.abort(ctx.signal.reason);
      resolveStop(failure(`Tool "${tool.name}" was aborted before it finished.`));
    };
    if (ctx.signal.aborted) onRunAbort();
    else ctx.signal.addEventListener("abort", onRunAbort, { once: true });
    if (timeoutMs > 0) {
      timer = setTimeout(() => {
        controller.abort(new Error(`timed out after ${timeoutMs} ms`));
        resolveStop(failure(`Tool "${tool.name}" timed out after ${timeoutMs} ms.`));
      }, timeoutMs);
    }
    controller.signal.addEventListener("abort", () => ctx.signal.removeEventListener("abort", onRunAbort), { once: true });
  });

  const run = (async () => {
    try {
      const raw = await tool.execute(toolCall.id, args, controller.signal, (partial) => {
        if (!settled) onPartial(partial);
      }, ctx.run);
      const normalized = normalizeResult(raw);
      if (!normalized.ok) return failure(`Tool "${tool.name}" returned an invalid result: ${normalized.malformed}`);
      const { isError, ...result } = normalized.result;
      return { result, isError: isError === true };
    } catch (error) {
      return failure(`Tool "${tool.name}" failed: ${messageOf(error)}`);
    }
  })();

  try {
    return await Promise.race([run, stop]);
  } finally {
    settled = true;
    if (timer) clearTimeout(timer);
    if (!controller.signal.aborted) controller.abort(CALL_FINISHED);
  }
}

/** A progress report in event form; text is cut like a result's (see `normalizeResult`). */
export function normalizePartial(partial: PartialToolResult): { content: ContentPart[]; details?: unknown } {
  if (typeof partial === "string") return { content: [textContent(truncate(partial))] };
  const normalized = normalizeResult(partial);
  if (!normalized.ok) return { content: [textContent(messageOf(partial))] };
  return { content: normalized.result.content, ...(partial.details !== undefined ? { details: partial.details } : {}) };
}

/**
 * Checks a tool's return value against the result shape. A bare string is accepted as text;
 * text past MAX_RESULT_CHARS is cut with a marker.
 */
export function normalizeResult(raw: unknown): { ok: true; result: ToolResult } | { ok: false; malformed: string } {
  if (typeof raw === "string") raw = { content: [textContent(raw)] };
  if (raw === null || typeof raw !== "object") return { ok: false, malformed: `expected an object with a content array, got ${raw === null ? "null" : typeof raw}` };
  const value = raw as Record<string, unknown>;
  if (!Array.isArray(value.content)) return { ok: false, malformed: `"content" must be an array of content parts` };
  const content: ContentPart[] = [];
  for (const [i, part] of value.content.entries()) {
    const p = part as Record<string, unknown> | null;
    if (p && p.type === "text" && typeof p.text === "string") {
      content.push({ type: "text", text: truncate(p.text) });
    } else if (p && p.type === "image" && typeof p.data === "string" && typeof p.mimeType === "string") {
      content.push({ type: "image", data: p.data, mimeType: p.mimeType });
    } else {
      return { ok: false, malformed: `content[${i}] must be {type:"text",text} or {type:"image",data,mimeType}` };
    }
  }
  const result: ToolResult = { content };
  if (value.details !== undefined) result.details = value.details;
  if (value.usage !== undefined && value.usage !== null && typeof value.usage === "object") result.usage = value.usage as ToolResult["usage"];
  if (value.terminate === true) result.terminate = true;
  if (value.isError === true) result.isError = true;
  return { ok: true, result };
}

function truncate(text: string): string {
  return cutText(text, MAX_RESULT_CHARS, (cut) => `\n[… output cut: ${cut} more characters not shown]`);
}
