/**
 * The offline `replay:FILE` model: answers each turn from a file of recorded assistant turns.
 * File: JSONL (one turn per line; blank lines skipped) or one JSON array of turns. A turn:
 *   {"content": "text", "toolCalls": [{"id", "name", "arguments"}], "usage"?, "finishReason"?}
 * also accepting OpenAI's `tool_calls: [{id, type, function: {name, arguments}}]`, `arguments` as an
 * object (serialised), `finish_reason`, and usage in either naming.
 * Rules:
 * - The Nth call to `complete()` returns turn N; running out, a bad line, or a recorded call to a
 *   tool that the request does not offer is a ModelError naming the file.
 * - In `content`, `{{result:TOOL}}` becomes the text of the latest result of TOOL in the
 *   conversation and `{{result}}` the latest tool result of any tool ("" when there is none).
 * - The final content is reported once through `onTextDelta`. Usage defaults to zeros.
 */
import { readRegularText } from "../regular-file.js";
import type { Usage } from "../tools/types.js";
import type { ChatMessage, FinishReason, ModelRequest, ModelResponse, Provider, ToolCall } from "./types.js";
import { callsWithBlock } from "./text-tool-calls.js";
import { zeroUsage } from "../tools/usage.js";
import { ModelError } from "./types.js";
import { buildRequestBody, contentText } from "./wire.js";
import { argumentsText, parseUsage } from "./wire-response.js";
import { reasoningFor } from "./reasoning.js";

/** One assistant turn as stored in a replay file (the form the recorder writes). */
export interface RecordedTurn {
  content: string;
  toolCalls: ToolCall[];
  usage?: Usage;
  finishReason?: FinishReason;
  toolCallBlock?: unknown;
}

export function createReplayProvider(file: string): Provider {
  let turns: Promise<RecordedTurn[]> | undefined;
  let next = 0;
  return {
    model: `replay:${file}`,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      if (request.signal.aborted) throw new ModelError(`replay of ${file} was aborted`);
      const all = await (turns ??= loadReplayFile(file));
      const index = next++;
      if (index >= all.length) {
        throw new ModelError(`replay file ${file} has ${all.length} turns; the run asked for turn ${index + 1}`);
      }
      const turn = all[index];
      const offered = new Set(request.tools.map((tool) => tool.name));
      for (const call of turn.toolCalls) {
        if (!offered.has(call.name)) {
          const names = [...offered].join(", ") || "none";
          throw new ModelError(
            `replay file ${file} turn ${index + 1} calls tool "${call.name}", which this run does not offer (offered: ${names})`,
          );
        }
      }
      const content = fillTemplates(turn.content, request.messages);
      if (content !== "") request.onTextDelta?.(content);
      const message: ModelResponse["message"] = {
        role: "assistant",
        content,
        toolCalls: callsWithBlock(turn.toolCalls.map((call) => ({ ...call })), turn.toolCallBlock),
      };
      if (turn.toolCallBlock !== undefined) message.toolCallBlock = turn.toolCallBlock;
      const finishReason = turn.finishReason ?? (turn.toolCalls.length > 0 ? "tool_calls" : "stop");
      return { message, usage: turn.usage ? { ...turn.usage } : zeroUsage(), finishReason };
    },
    /** What a Chat Completions server would receive for this conversation (replay sends nothing). */
    // Replay sends nothing and never received reasoning, so none is shown going back.
    describeRequest: (request) => buildRequestBody({ model: `replay:${file}`, stream: false }, reasoningFor(request.messages, ""), request.tools),
  };
}

/** Read and check a whole replay file. */
export async function loadReplayFile(file: string): Promise<RecordedTurn[]> {
  let read: { text: string } | { kind: string };
  try {
    read = await readRegularText(file);
  } catch (error) {
    const code = (error as { code?: string }).code;
    const why = code === "ENOENT" ? "does not exist" : `cannot be read (${code ?? (error as Error).message})`;
    throw new ModelError(`replay file ${file} ${why}`);
  }
  if ("kind" in read) throw new ModelError(`replay file ${file} is not a regular file (${read.kind})`);
  return parseReplayText(read.text, file);
}

/** Parse replay file text (JSON array or JSONL) into turns. `file` is only used in messages. */
export function parseReplayText(text: string, file: string): RecordedTurn[] {
  const trimmed = text.trim();
  if (trimmed.startsWith("[")) {
    let values: unknown;
    try {
      values = JSON.parse(trimmed);
    } catch (error) {
      throw new ModelError(`replay file ${file} is not valid JSON: ${(error as Error).message}`);
    }
    return (values as unknown[]).map((value, i) => parseRecordedTurn(value, `replay file ${file} turn ${i + 1}`, i + 1));
  }
  const turns: RecordedTurn[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new ModelError(`replay file ${file} line ${i + 1} is not valid JSON: ${(error as Error).message}`);
    }
    turns.push(parseRecordedTurn(value, `replay file ${file} line ${i + 1}`, turns.length + 1));
  });
  return turns;
}

type Loose = Record<string, unknown>;

/** One turn from its JSON value; `where` prefixes error messages. */
export function parseRecordedTurn(value: unknown, where: string, turnNumber = 1): RecordedTurn {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ModelError(`${where} is not a JSON object`);
  }
  const raw = value as Loose;
  if (raw.content !== undefined && raw.content !== null && typeof raw.content !== "string") {
    throw new ModelError(`${where}: "content" must be a string`);
  }
  const rawCalls = raw.toolCalls ?? raw.tool_calls ?? [];
  if (!Array.isArray(rawCalls)) throw new ModelError(`${where}: "toolCalls" must be an array`);
  const toolCalls = rawCalls.map((item, i): ToolCall => {
    const call = (item ?? {}) as Loose;
    const fn = (call.function ?? call) as Loose;
    if (typeof fn.name !== "string" || fn.name === "") throw new ModelError(`${where}: tool call ${i + 1} has no "name"`);
    const id = typeof call.id === "string" && call.id !== "" ? call.id : `call_${turnNumber}_${i + 1}`;
    return { id, name: fn.name, arguments: fn.arguments === undefined ? "{}" : argumentsText(fn.arguments) };
  });
  const turn: RecordedTurn = { content: typeof raw.content === "string" ? raw.content : "", toolCalls };
  if (raw.usage !== undefined && raw.usage !== null) turn.usage = parseAnyUsage(raw.usage);
  const finish = raw.finishReason ?? raw.finish_reason;
  if (typeof finish === "string" && finish !== "") turn.finishReason = finish;
  const block = raw.toolCallBlock ?? raw.tool_call;
  if (block !== undefined && block !== null) turn.toolCallBlock = block;
  return turn;
}

function parseAnyUsage(raw: unknown): Usage {
  const usage = (raw ?? {}) as Loose;
  if ("promptTokens" in usage || "completionTokens" in usage || "totalTokens" in usage) {
    return parseUsage({ prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.totalTokens });
  }
  return parseUsage(usage);
}

const TEMPLATE = /\{\{result(?::([A-Za-z][A-Za-z0-9_-]*))?\}\}/g;

/** Replace `{{result}}` / `{{result:TOOL}}` with the latest matching tool result text. */
export function fillTemplates(content: string, messages: ChatMessage[]): string {
  if (!content.includes("{{result")) return content;
  return content.replace(TEMPLATE, (_match, toolName: string | undefined) => {
    for (let i = messages.length - 1; i >= 0; i--) {
      const message = messages[i];
      if (message.role === "tool" && (toolName === undefined || message.toolName === toolName)) {
        return contentText(message.content);
      }
    }
    return "";
  });
}
