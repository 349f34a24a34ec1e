/**
 * Request settings a server may refuse, and the one resend without them. Rules:
 * - Each is given up at most once per provider (so once per run), and stays given up for the rest
 *   of it; the resend goes out at once and does not count against `maxRetries`.
 * - `stream_options` (only with `streamUsage` "auto"): a 400/422 that names it (Mistral).
 * - Reasoning fields sent back: a 400/422 calling a `reasoning…` field unsupported, unknown or
 *   extra (Groq with some models, older vLLM).
 * - `max_tokens`: a 400/422 calling it unsupported and naming `max_completion_tokens` (OpenAI's
 *   reasoning models); the limit then goes out as `max_completion_tokens`.
 * - Streaming (only with `stream` "auto"): a refusal to stream with tools, e.g. llama.cpp builds
 *   answering 500 "Cannot use tools with stream"; the request then goes out without `stream`.
 * Which settings a request carries is decided before it is sent (`stream_options` only streamed,
 * reasoning only when a turn carries some), so each check applies only when the setting was sent.
 */
import type { BodySettings } from "./wire.js";
import { namesStreamOptions, refusesField } from "./server-errors.js";

/** What may still be given up, and the settings the next request is built from (changed in place). */
export interface ResendState {
  settings: BodySettings;
  /** `streamUsage` "auto": stream_options may be dropped. */
  streamUsageAuto: boolean;
  /** `stream` "auto": streaming may be turned off. */
  streamAuto: boolean;
  /** False once the server refused reasoning fields. */
  sendReasoning: boolean;
}

/**
 * The setting `state` gives up for this refusal (status and error text), described for the retry
 * event ("without stream_options" …), or undefined when the refusal is about none of them.
 * `sentReasoning`: the refused request carried reasoning fields.
 */
export function giveUpRefusedSetting(state: ResendState, status: number | null, text: string, sentReasoning: boolean): string | undefined {
  const { settings } = state;
  if (settings.stream && state.streamUsageAuto && settings.streamUsage !== false && namesStreamOptions(status, text)) {
    settings.streamUsage = false;
    return "without stream_options";
  }
  if (state.sendReasoning && sentReasoning && refusesField(status, text, "reasoning")) {
    state.sendReasoning = false;
    return "without reasoning fields";
  }
  if (settings.maxTokens !== undefined && settings.maxTokens > 0 && (settings.maxTokensField ?? "max_tokens") === "max_tokens" && refusesMaxTokens(status, text)) {
    settings.maxTokensField = "max_completion_tokens";
    return "with max_completion_tokens instead of max_tokens";
  }
  if (settings.stream && state.streamAuto && refusesStreamingWithTools(status, text)) {
    settings.stream = false;
    return "without streaming";
  }
  return undefined;
}

/** OpenAI's reasoning models: "Unsupported parameter: 'max_tokens' … Use 'max_completion_tokens' instead." */
export function refusesMaxTokens(status: number | null, text: string): boolean {
  return refusesField(status, text, "max_tokens") && /max_completion_tokens/.test(text);
}

/**
 * A server that cannot stream a request with tools (llama.cpp: 500 "Cannot use tools with
 * stream"): a 400, 422 or 500 whose text names streaming and tools and says it cannot or is not
 * supported.
 */
export function refusesStreamingWithTools(status: number | null, text: string): boolean {
  if (status !== 400 && status !== 422 && status !== 500) return false;
  return /\bstream/i.test(text) && /\btools?\b/i.test(text) && /cannot|can't|not supported|unsupported|not allowed|not permitted/i.test(text);
}
