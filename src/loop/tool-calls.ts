/**
 * Extracting tool calls from an assistant message. Two forms:
 * - OpenAI `tool_calls` (already parsed by the provider into `message.toolCalls`);
 * - the alternative single `tool_call` block `{name, arguments, id?}` as a field on the message
 *   (`toolCallBlock`).
 * `tool_calls` wins when both are present. Ids missing from the model are generated (`makeId`
 * is unique in the run). Calls written into the answer's text are the provider's business
 * (opt-in `model.textToolCalls`, see provider/text-tool-calls.ts).
 */
import type { AssistantMessage, ToolCall } from "../provider/types.js";
import { blockToCall } from "../provider/text-tool-calls.js";

export interface ExtractedToolCalls {
  toolCalls: ToolCall[];
  /** The text to keep as the assistant's answer. */
  content: string;
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
  const fromField = blockToCall(message.toolCallBlock);
  if (fromField) return { content: message.content, toolCalls: [{ ...fromField, id: fromField.id || makeId() }] };
  return { content: message.content, toolCalls: [] };
}
