/**
 * `--session FILE`: the conversation (without the system prompt) kept as JSON between runs.
 * A missing file starts a new session; the file is written atomically after each run, mode 0600
 * when new (an existing file keeps its mode: see private-file.ts). Only a regular file is read: a
 * FIFO, socket or device there is refused at once (opened non-blocking, checked with fstat), never
 * waited on.
 */
import { resolve } from "node:path";
import { readRegularText } from "../regular-file.js";
import type { ChatMessage } from "../provider/types.js";
import { writePrivateFileAtomic } from "../private-file.js";
import { UsageError } from "../errors.js";

interface SessionFile {
  version: 1;
  messages: ChatMessage[];
}

/**
 * The saved conversation (system messages dropped). A malformed message, or a call to a tool
 * `isToolAllowed` refuses (the spec's policy), is a usage error naming the file and the message.
 * A relative `file` is read from `cwd` (the call's folder, io.cwd); messages name it as given.
 */
export async function loadSession(file: string, isToolAllowed: (name: string) => boolean, cwd: string): Promise<ChatMessage[]> {
  let read: { text: string } | { kind: string };
  try {
    read = await readRegularText(resolve(cwd, file));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new UsageError(`cannot read session file ${file}: ${(error as Error).message}`);
  }
  if ("kind" in read) throw new UsageError(`session file ${file} is not a regular file (${read.kind})`);
  const text = read.text;
  let parsed: SessionFile;
  try {
    parsed = JSON.parse(text) as SessionFile;
  } catch (error) {
    throw new UsageError(`session file ${file} is not JSON: ${(error as Error).message}`);
  }
  if (parsed?.version !== 1 || !Array.isArray(parsed.messages)) throw new UsageError(`session file ${file} is not a yiem session (version 1)`);
  const messages: ChatMessage[] = [];
  parsed.messages.forEach((message: unknown, index) => {
    const problem = messageProblem(message) ?? deniedCallProblem(message as ChatMessage, isToolAllowed);
    if (problem) throw new UsageError(`session file ${file}: messages[${index}]: ${problem}`);
    if ((message as ChatMessage).role !== "system") messages.push(message as ChatMessage);
  });
  return messages;
}

/** A problem when `message` calls a tool the policy refuses (shared with --input-format ndjson); else null. */
export function deniedCallProblem(message: ChatMessage, isToolAllowed: (name: string) => boolean): string | null {
  if (message.role !== "assistant") return null;
  const denied = message.toolCalls.find((call) => !isToolAllowed(call.name));
  return denied ? `calls the tool "${denied.name}", which this spec does not allow (tools.allow, tools.deny): the conversation cannot continue from it` : null;
}

/**
 * What is wrong with one saved message, or null: the shapes yiem saves (provider/types.ts), with
 * string `content` for system, user and assistant (an object is refused), `toolCalls` of
 * `{id, name, arguments}` strings, and a tool result's content parts.
 */
function messageProblem(value: unknown): string | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "must be an object";
  const m = value as Record<string, unknown>;
  const isString = (v: unknown) => typeof v === "string";
  switch (m.role) {
    case "system":
    case "user":
      return isString(m.content) ? null : `"content" of a ${m.role} message must be a string`;
    case "assistant": {
      if (!isString(m.content)) return '"content" of an assistant message must be a string';
      if (!Array.isArray(m.toolCalls)) return '"toolCalls" of an assistant message must be an array';
      const bad = m.toolCalls.findIndex((c: unknown) => {
        const call = c as Record<string, unknown> | null;
        return !call || typeof call !== "object" || !isString(call.id) || !isString(call.name) || !isString(call.arguments);
      });
      return bad < 0 ? null : `toolCalls[${bad}] of an assistant message must be {id, name, arguments} strings`;
    }
    case "tool": {
      if (!isString(m.toolCallId) || !isString(m.toolName)) return '"toolCallId" and "toolName" of a tool message must be strings';
      if (typeof m.isError !== "boolean") return '"isError" of a tool message must be true or false';
      if (!Array.isArray(m.content)) return '"content" of a tool message must be an array of content parts';
      const bad = m.content.findIndex((c: unknown) => {
        const part = c as Record<string, unknown> | null;
        if (!part || typeof part !== "object") return true;
        return part.type === "text" ? !isString(part.text) : part.type === "image" ? !isString(part.data) || !isString(part.mimeType) : true;
      });
      return bad < 0 ? null : `content[${bad}] of a tool message must be {type:"text",text} or {type:"image",data,mimeType}`;
    }
    default:
      return `"role" must be system, user, assistant or tool (got ${JSON.stringify(m.role) ?? "nothing"})`;
  }
}

/** Writes the conversation to `file` (a relative one in `cwd`, the call's folder). */
export async function saveSession(file: string, messages: ChatMessage[], cwd: string): Promise<void> {
  const data: SessionFile = { version: 1, messages: messages.filter((m) => m.role !== "system") };
  await writePrivateFileAtomic(resolve(cwd, file), `${JSON.stringify(data, null, 2)}\n`);
}
