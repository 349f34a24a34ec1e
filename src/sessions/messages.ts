/**
 * Checking a stored conversation (yiem's own message shape, as `--session` files and the session
 * store keep it) before any of it is sent again. One home for the rule, meant for every reader
 * of stored messages. Rules:
 * - `messages` is a list of objects whose `role` is `user`, `assistant` or `tool`; a `system`
 *   message is refused unless `allowSystem` (the store never keeps one: each run sends the
 *   current spec's system prompt).
 * - user: `content` a string, optional `images` (attachments) a list of image parts. assistant: `content` a string, `toolCalls` a list of
 *   `{id, name, arguments}` strings, optional `reasoning` (an object) and `toolCallBlock`.
 *   tool: `toolCallId`, `toolName` strings, `content` a list of text or image parts, `isError`
 *   a boolean.
 * - A tool result must answer a call an earlier assistant message made, once: a result for a
 *   call nobody made is what a server refuses, and what a hand edit leaves behind.
 * - Unknown keys are refused (a newer format bumps the file's version instead).
 */
import type { ChatMessage } from "../provider/types.js";

export type StoredMessagesCheck = { ok: true; messages: ChatMessage[] } | { ok: false; problem: string };

const KEYS: Record<string, readonly string[]> = {
  system: ["role", "content"],
  user: ["role", "content", "images"],
  assistant: ["role", "content", "toolCalls", "toolCallBlock", "reasoning"],
  tool: ["role", "toolCallId", "toolName", "content", "isError"],
};

/** Checks `value` as a stored conversation (rules above); `where` prefixes each problem, e.g. `messages`. */
export function checkStoredMessages(value: unknown, options: { where?: string; allowSystem?: boolean; openCalls?: Set<string> } = {}): StoredMessagesCheck {
  const where = options.where ?? "messages";
  if (!Array.isArray(value)) return { ok: false, problem: `${where} must be a list of messages` };
  // Calls made and not answered yet; a caller checking one conversation in parts passes its own set.
  const open = options.openCalls ?? new Set<string>();
  for (let i = 0; i < value.length; i++) {
    const problem = messageProblem(value[i], open, options.allowSystem ?? false);
    if (problem) return { ok: false, problem: `${where}[${i}]: ${problem}` };
  }
  return { ok: true, messages: value as ChatMessage[] };
}

function messageProblem(value: unknown, open: Set<string>, allowSystem: boolean): string | undefined {
  if (!isObject(value)) return "a message must be an object";
  const role = value.role;
  if (role === "system" && !allowSystem) return 'a "system" message is not allowed here (the system prompt is never stored: each run sends the current spec\'s)';
  if (typeof role !== "string" || !(role in KEYS)) return `"role" must be user, assistant or tool (got ${JSON.stringify(role)})`;
  const unknown = Object.keys(value).find((key) => !KEYS[role].includes(key));
  if (unknown !== undefined) return `unknown key ${JSON.stringify(unknown)} in a ${role} message`;
  switch (role) {
    case "system":
    case "user":
      if (typeof value.content !== "string") return `a ${role} message's "content" must be a string`;
      if (value.images !== undefined && (!Array.isArray(value.images) || !value.images.every((p) => isContentPart(p) && (p as { type: string }).type === "image"))) {
        return 'a user message\'s "images" must be a list of {type: "image", data, mimeType} parts';
      }
      return undefined;
    case "assistant": {
      if (typeof value.content !== "string") return 'an assistant message\'s "content" must be a string';
      if (!Array.isArray(value.toolCalls)) return 'an assistant message\'s "toolCalls" must be a list';
      for (const [n, call] of value.toolCalls.entries()) {
        if (!isObject(call) || typeof call.id !== "string" || typeof call.name !== "string" || typeof call.arguments !== "string") {
          return `toolCalls[${n}] must be {id, name, arguments} strings`;
        }
        open.add(call.id);
      }
      if (value.reasoning !== undefined && !isObject(value.reasoning)) return '"reasoning" must be an object';
      return undefined;
    }
    case "tool": {
      if (typeof value.toolCallId !== "string" || typeof value.toolName !== "string") return 'a tool message needs "toolCallId" and "toolName" strings';
      if (typeof value.isError !== "boolean") return 'a tool message\'s "isError" must be true or false';
      if (!Array.isArray(value.content) || !value.content.every(isContentPart)) return 'a tool message\'s "content" must be a list of {type: "text", text} or {type: "image", data, mimeType} parts';
      if (!open.delete(value.toolCallId)) return `a result for tool call ${JSON.stringify(value.toolCallId)}, which no earlier assistant message made (or which was already answered)`;
      return undefined;
    }
  }
  return undefined;
}

function isContentPart(part: unknown): boolean {
  if (!isObject(part)) return false;
  if (part.type === "text") return typeof part.text === "string";
  if (part.type === "image") return typeof part.data === "string" && typeof part.mimeType === "string";
  return false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
