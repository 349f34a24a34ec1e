/**
 * Extracting tool calls from an assistant message. Two forms:
 * - OpenAI `tool_calls` (already parsed by the provider into `message.toolCalls`);
 * - the alternative single `tool_call` block `{name, arguments, id?}`, either as a field on the
 *   message (`toolCallBlock`) or as the whole content: a JSON object `{"tool_call": {...}}`,
 *   optionally inside one fenced code block.
 * `tool_calls` wins when both are present. Ids missing from the model are generated.
 */
import type { AssistantMessage, ToolCall } from "../provider/types.js";
import { isPlainObject } from "../tools/arguments.js";

export interface ExtractedToolCalls {
  toolCalls: ToolCall[];
  /** The text to keep as the assistant's answer (the block form's JSON is not an answer). */
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
  const fromField = blockToCall(message.toolCallBlock, makeId);
  if (fromField) return { content: message.content, toolCalls: [fromField] };
  const fromContent = blockToCall(parseContentBlock(message.content), makeId);
  if (fromContent) return { content: "", toolCalls: [fromContent] };
  return { content: message.content, toolCalls: [] };
}

function parseContentBlock(content: string): unknown {
  const trimmed = content.trim();
  if (!trimmed.includes("tool_call")) return undefined;
  const fenced = /^```[A-Za-z]*\s*\n([\s\S]*?)\n?```$/.exec(trimmed);
  const json = fenced ? fenced[1] : trimmed;
  if (!json.trimStart().startsWith("{")) return undefined;
  try {
    const parsed: unknown = JSON.parse(json);
    return isPlainObject(parsed) ? parsed.tool_call : undefined;
  } catch {
    return undefined;
  }
}

function blockToCall(block: unknown, makeId: () => string): ToolCall | null {
  if (!isPlainObject(block)) return null;
  const fn = isPlainObject(block.function) ? block.function : block;
  if (typeof fn.name !== "string") return null;
  const args = fn.arguments ?? fn.args ?? fn.parameters ?? {};
  return {
    id: typeof block.id === "string" && block.id ? block.id : makeId(),
    name: fn.name,
    arguments: typeof args === "string" ? args : JSON.stringify(args),
  };
}
