/**
 * A scripted model for tests of the loop and of users' agents (public API).
 * Rules:
 * - Call N returns script entry N: a turn, or a function of the request returning one.
 * - `error` makes that call throw it; `delayMs` waits first, and an abort during the wait rejects.
 * - Every request is kept in `requests` (a copy of messages and tools) for assertions.
 * - Running out of script is an error that says how many turns there were.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Usage } from "../tools/types.js";
import type { ChatMessage, FinishReason, ModelRequest, ModelResponse, Provider, ResponseFormat, ToolSpec } from "./types.js";
import { callsWithBlock } from "./text-tool-calls.js";
import { ModelError } from "./types.js";
import { argumentsText } from "./wire-response.js";

export interface ScriptedTurn {
  content?: string;
  /** `id` defaults to `call_<turn>_<n>`; object arguments are serialised. */
  toolCalls?: Array<{ id?: string; name: string; arguments: string | object }>;
  toolCallBlock?: unknown;
  usage?: Partial<Usage>;
  /** Default: `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: FinishReason;
  /** Thrown instead of answering. */
  error?: Error;
  delayMs?: number;
}

export type ScriptStep = ScriptedTurn | ((request: ModelRequest) => ScriptedTurn | Promise<ScriptedTurn>);

export interface RecordedRequest {
  messages: ChatMessage[];
  tools: ToolSpec[];
  /** When the request asked for one (structured output, native mode). */
  responseFormat?: ResponseFormat;
}

export type ScriptedProvider = Provider & {
  /** What each call received, in order. */
  readonly requests: RecordedRequest[];
  /** Calls not yet made. */
  readonly remaining: number;
};

export function createScriptedProvider(turns: ScriptStep[], options: { model?: string } = {}): ScriptedProvider {
  const requests: RecordedRequest[] = [];
  return {
    model: options.model ?? "scripted",
    requests,
    get remaining() {
      return Math.max(0, turns.length - requests.length);
    },
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const index = requests.length;
      requests.push({
        messages: structuredClone(request.messages),
        tools: structuredClone(request.tools),
        ...(request.responseFormat ? { responseFormat: structuredClone(request.responseFormat) } : {}),
      });
      if (index >= turns.length) {
        throw new ModelError(`scripted provider has ${turns.length} turns; the run asked for turn ${index + 1}`);
      }
      const step = turns[index];
      const turn = typeof step === "function" ? await step(request) : step;
      if (turn.delayMs && turn.delayMs > 0) {
        await sleep(turn.delayMs, undefined, { signal: request.signal }).catch((cause: unknown) => {
          throw new ModelError("scripted model call was aborted", null, { cause });
        });
      }
      if (request.signal.aborted) throw new ModelError("scripted model call was aborted");
      if (turn.error) throw turn.error;
      const content = turn.content ?? "";
      if (content !== "") request.onTextDelta?.(content);
      const toolCalls = (turn.toolCalls ?? []).map((call, i) => ({
        id: call.id ?? `call_${index + 1}_${i + 1}`,
        name: call.name,
        arguments: argumentsText(call.arguments),
      }));
      const message: ModelResponse["message"] = { role: "assistant", content, toolCalls: callsWithBlock(toolCalls, turn.toolCallBlock) };
      if (turn.toolCallBlock !== undefined) message.toolCallBlock = turn.toolCallBlock;
      const promptTokens = turn.usage?.promptTokens ?? 0;
      const completionTokens = turn.usage?.completionTokens ?? 0;
      return {
        message,
        usage: { promptTokens, completionTokens, totalTokens: turn.usage?.totalTokens ?? promptTokens + completionTokens },
        finishReason: turn.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
      };
    },
  };
}
