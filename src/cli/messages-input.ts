/**
 * `--input-format ndjson`: each stdin line is one OpenAI-format message
 * (`{"role":"user","content":"…"}`; also system, assistant with `tool_calls`, and tool).
 * Blank lines are skipped; anything else that is not such a message is a usage error naming the line.
 */
import type { ChatMessage } from "../provider/types.js";
import { UsageError } from "./errors.js";
import { deniedCallProblem } from "./session.js";

/** The messages of `text`; a call to a tool `isToolAllowed` refuses is a usage error too. */
export function parseMessagesNdjson(text: string, isToolAllowed: (name: string) => boolean = () => true): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    const where = `stdin line ${index + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new UsageError(`${where}: not JSON (${(error as Error).message})`);
    }
    const message = toMessage(value, where);
    const denied = deniedCallProblem(message, isToolAllowed);
    if (denied) throw new UsageError(`${where}: ${denied}`);
    messages.push(message);
  });
  return messages;
}

/** One OpenAI-format message (a parsed JSON value) as a ChatMessage; a usage error names `where`. */
export function toMessage(value: unknown, where: string): ChatMessage {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new UsageError(`${where}: a message must be a JSON object`);
  const m = value as Record<string, unknown>;
  const text = (v: unknown): string => {
    if (typeof v === "string") return v;
    if (v === null || v === undefined) return "";
    if (Array.isArray(v)) return v.map((p) => (p && typeof p === "object" && typeof (p as { text?: unknown }).text === "string" ? (p as { text: string }).text : "")).join("");
    throw new UsageError(`${where}: "content" must be a string or an array of text parts`);
  };
  switch (m.role) {
    case "system":
    case "developer":
      return { role: "system", content: text(m.content) };
    case "user":
      return { role: "user", content: text(m.content) };
    case "assistant": {
      const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
      return {
        role: "assistant",
        content: text(m.content),
        toolCalls: calls.map((c, i) => {
          const call = c as { id?: unknown; function?: { name?: unknown; arguments?: unknown } };
          if (typeof call?.function?.name !== "string") throw new UsageError(`${where}: tool_calls[${i}].function.name must be a string`);
          const args = call.function.arguments;
          return { id: String(call.id ?? `call_${i}`), name: call.function.name, arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}) };
        }),
      };
    }
    case "tool":
      if (typeof m.tool_call_id !== "string") throw new UsageError(`${where}: a tool message needs "tool_call_id"`);
      return { role: "tool", toolCallId: m.tool_call_id, toolName: typeof m.name === "string" ? m.name : "", content: [{ type: "text", text: text(m.content) }], isError: false };
    default:
      throw new UsageError(`${where}: "role" must be system, user, assistant or tool (got ${JSON.stringify(m.role)})`);
  }
}
