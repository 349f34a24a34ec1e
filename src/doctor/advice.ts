/**
 * From `yiem doctor`'s probe results (./probes.ts) to the spec keys to set. Rules (the keys and
 * what yiem does without them: docs/compatibility.md):
 * - tool calling works when a forced call (or, when the server refuses `tool_choice`, the
 *   parallel-calls probe, which sends none, as yiem does) comes back as `tool_calls`; calls
 *   written in the text call for `model.textToolCalls: true`; no call at all: it does not work;
 * - streaming with tools refused (or streaming refused) → `model.stream: false`;
 * - `stream_options` refused while streaming works → `model.streamUsage: false`;
 * - `max_tokens` refused and `max_completion_tokens` taken → `model.maxTokensField:
 *   max_completion_tokens`; the other way round, when the spec asks for max_completion_tokens →
 *   `max_tokens`;
 * - a key is only listed when the spec does not already have the advised value.
 */
import type { ResolvedModel } from "../config/types.js";
import type { Probe, ProbeName } from "./probes.js";

export interface Setting {
  key: "model.textToolCalls" | "model.stream" | "model.streamUsage" | "model.maxTokensField";
  value: boolean | string;
  reason: string;
}

export type ToolCalling = "structured" | "text" | "none";

export interface Advice {
  toolCalling: ToolCalling;
  settings: Setting[];
}

export function advise(probes: Probe[], model: Pick<ResolvedModel, "textToolCalls" | "stream" | "streamUsage" | "maxTokensField">): Advice {
  const get = (name: ProbeName) => probes.find((p) => p.name === name);
  const works = (name: ProbeName) => get(name)?.result === "works";
  const refused = (name: ProbeName) => get(name)?.result === "refused";
  const asText = (name: ProbeName) => get(name)?.calls?.asText === true;
  const structuredCalls = (name: ProbeName) => (get(name)?.calls?.count ?? 0) > 0 && !asText(name);
  const toolCalling: ToolCalling = works("toolCall") || (refused("toolCall") && structuredCalls("parallelCalls"))
    ? "structured"
    : asText("toolCall") || asText("parallelCalls") || asText("streamTools") ? "text" : "none";
  const settings: Setting[] = [];
  const add = (setting: Setting, current: unknown) => {
    if (current !== setting.value) settings.push(setting);
  };
  if (toolCalling === "text") {
    add({ key: "model.textToolCalls", value: true, reason: "the model writes its tool calls in the answer's text" }, model.textToolCalls);
  }
  if (refused("stream")) add({ key: "model.stream", value: false, reason: `the server refuses to stream: ${get("stream")!.detail}` }, model.stream);
  else if (toolCalling !== "none" && refused("streamTools")) {
    add({ key: "model.stream", value: false, reason: `the server refuses to stream with tools: ${get("streamTools")!.detail}` }, model.stream);
  }
  if (works("stream") && refused("streamOptions") && !settings.some((s) => s.key === "model.stream")) {
    add({ key: "model.streamUsage", value: false, reason: `the server refuses stream_options: ${get("streamOptions")!.detail}` }, model.streamUsage);
  }
  if (refused("maxTokens") && works("maxCompletionTokens")) {
    add({ key: "model.maxTokensField", value: "max_completion_tokens", reason: `the server refuses max_tokens: ${get("maxTokens")!.detail}` }, model.maxTokensField);
  } else if (works("maxTokens") && refused("maxCompletionTokens")) {
    add({ key: "model.maxTokensField", value: "max_tokens", reason: `the server refuses max_completion_tokens: ${get("maxCompletionTokens")!.detail}` }, model.maxTokensField);
  }
  return { toolCalling, settings };
}
