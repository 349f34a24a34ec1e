/**
 * Reasoning fields go back only to the server that sent them. Rules:
 * - A provider marks the reasoning it receives with its origin (`from`: `model at baseURL`,
 *   without credentials or query), so the mark survives a `--session` file.
 * - Before a request, an assistant message whose reasoning came from another origin, or from no
 *   known one (a hand-written session file, a replay), is sent without it. The message itself is
 *   not changed: its stripped copy is used, the same copy for every request while the message is
 *   unchanged, so the wire cache (wire.ts) still serialises it once.
 * - When no message needs stripping, the conversation array itself is used.
 */
import type { AssistantMessage, ChatMessage, ModelResponse } from "./types.js";

/** The origin of a server's reasoning: `model at baseURL` (the base URL as `shownBaseURL` gives it). */
export function reasoningOrigin(model: string, baseURL: string): string {
  return `${model} at ${shownBaseURL(baseURL)}`;
}

/** A base URL as shown in messages and marks: protocol, host and path only (no credentials, no query). */
/** The server a Chat Completions model talks to: `baseURL`, else OPENAI_BASE_URL of `env` (trimmed), else OpenAI's API. */
export function modelBaseURL(baseURL: string | undefined, env: NodeJS.ProcessEnv): string {
  return baseURL || env.OPENAI_BASE_URL?.trim() || "https://api.openai.com/v1";
}

/** `modelBaseURL` as shown (`shownBaseURL`); `env` defaults to the process's for library callers. */
export function modelServerURL(baseURL: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return shownBaseURL(modelBaseURL(baseURL, env));
}

export function shownBaseURL(baseURL: string): string {
  try {
    const parsed = new URL(baseURL);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, "")}`;
  } catch {
    return "(invalid base URL)"; // the SDK refuses such a URL anyway
  }
}

/** `response` with its reasoning marked as coming from `origin` (no copy when it has none). */
export function markReasoning(response: ModelResponse, origin: string): ModelResponse {
  const reasoning = response.message.reasoning;
  if (!reasoning) return response;
  return { ...response, message: { ...response.message, reasoning: { ...reasoning, from: origin } } };
}

/** `messages` as sent to `origin`: reasoning from elsewhere left out (see module rules); "" is no origin at all. */
export function reasoningFor(messages: ChatMessage[], origin: string): ChatMessage[] {
  let out: ChatMessage[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    const keep = message.role !== "assistant" || !message.reasoning || (origin !== "" && message.reasoning.from === origin);
    if (keep) out?.push(message);
    else (out ??= messages.slice(0, i)).push(withoutReasoning(message as AssistantMessage));
  }
  return out ?? messages;
}

const stripped = new WeakMap<AssistantMessage, AssistantMessage>();

function withoutReasoning(message: AssistantMessage): AssistantMessage {
  const cached = stripped.get(message);
  if (cached && cached.content === message.content && cached.toolCalls === message.toolCalls) return cached;
  const { reasoning: _dropped, ...rest } = message;
  const copy: AssistantMessage = rest;
  stripped.set(message, copy);
  return copy;
}

/** Whether any assistant turn of `messages` carries reasoning. */
export function carriesReasoning(messages: ChatMessage[]): boolean {
  return messages.some((m) => m.role === "assistant" && m.reasoning !== undefined);
}
