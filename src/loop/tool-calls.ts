/**
 * Extracting tool calls from an assistant message: `message.toolCalls`, as the provider parsed
 * them (wire forms such as a single `tool_call` block or calls written into the answer's text
 * are the provider's business: provider/text-tool-calls.ts). Ids missing from the model are
 * generated (`makeId` is unique in the run).
 */
import type { AssistantMessage, ToolCall } from "../provider/types.js";

export interface ExtractedToolCalls {
  toolCalls: ToolCall[];
  /** The text to keep as the assistant's answer. */
  content: string;
}

/**
 * `calls` capped at `max` (loop/types.ts, `maxToolCallsPerResponse`): the first `max`, plus the
 * next one as `over` (rejected with `overReason`, so the model learns why); any after it are
 * dropped, so a flood of calls costs neither memory nor events. `over` is null within the cap.
 */
export function capToolCalls(calls: ToolCall[], max: number): { calls: ToolCall[]; over: ToolCall | null; overReason: string } {
  if (calls.length <= max) return { calls, over: null, overReason: "" };
  const dropped = calls.length - max - 1;
  const overReason =
    `Not executed: the response held ${calls.length} tool calls and at most ${max} run per response; ` +
    `this call${dropped > 0 ? ` and the ${dropped} after it were` : " was"} not run. Send the calls still needed in your next response, at most ${max} at once.`;
  return { calls: calls.slice(0, max + 1), over: calls[max], overReason };
}

export function extractToolCalls(message: AssistantMessage, makeId: () => string): ExtractedToolCalls {
  if (message.toolCalls.length > 0) {
    return {
      content: message.content,
      toolCalls: message.toolCalls.map((call) => ({
        id: call.id || makeId(),
        name: String(call.name ?? ""),
        arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
      })),
    };
  }
  return { content: message.content, toolCalls: [] };
}
