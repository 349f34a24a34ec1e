/**
 * Provider from model settings: `replay:FILE` is the offline replay model, any other name is a
 * Chat Completions model. Provider modules are imported only here, when needed, so importing
 * this file costs nothing.
 */
import type { OpenAIProviderOptions } from "./openai.js";
import { ModelError, type Provider } from "./types.js";

/** Resolved model settings (spec, environment and flags already merged; the key itself, not its variable name). */
export type ModelSettings = { name: string } & Omit<OpenAIProviderOptions, "model" | "fetch">;

export const REPLAY_PREFIX = "replay:";

export async function createProvider(model: ModelSettings): Promise<Provider> {
  if (model.name.startsWith(REPLAY_PREFIX)) {
    const file = model.name.slice(REPLAY_PREFIX.length);
    if (file.trim() === "") throw new ModelError(`model "${model.name}" names no file: use replay:FILE, e.g. replay:runs/demo.jsonl`);
    const { createReplayProvider } = await import("./replay.js");
    return createReplayProvider(file);
  }
  const { createOpenAIProvider } = await import("./openai.js");
  const { name, ...settings } = model;
  return createOpenAIProvider({ model: name, ...settings });
}
