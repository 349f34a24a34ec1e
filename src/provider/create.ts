/**
 * Provider from model settings: `replay:FILE` is the offline replay model, any other name is a
 * Chat Completions model. With `textToolCalls`, calls written into the answer's text are read
 * as tool calls (see text-tool-calls.ts). Provider modules are imported only here, when needed,
 * so importing this file costs nothing.
 */
import type { OpenAIProviderOptions } from "./openai.js";
import { ModelError, type Provider } from "./types.js";

/** Resolved model settings (spec, environment and flags already merged; the key itself, not its variable name); `fetch` (a batch's shared limiter) is for Chat Completions models only. */
export type ModelSettings = { name: string; textToolCalls?: boolean } & Omit<OpenAIProviderOptions, "model">;

export const REPLAY_PREFIX = "replay:";

export async function createProvider(model: ModelSettings): Promise<Provider> {
  const provider = await createBaseProvider(model);
  if (!model.textToolCalls) return provider;
  const { withTextToolCalls } = await import("./text-tool-calls.js");
  return withTextToolCalls(provider);
}

async function createBaseProvider(model: ModelSettings): Promise<Provider> {
  if (model.name.startsWith(REPLAY_PREFIX)) {
    const file = model.name.slice(REPLAY_PREFIX.length);
    if (file.trim() === "") throw new ModelError(`model "${model.name}" names no file: use replay:FILE, e.g. replay:runs/demo.jsonl`);
    const { createReplayProvider } = await import("./replay.js");
    return createReplayProvider(file);
  }
  const { createOpenAIProvider } = await import("./openai.js");
  const { name, textToolCalls: _textToolCalls, ...settings } = model;
  return createOpenAIProvider({ model: name, ...settings });
}
