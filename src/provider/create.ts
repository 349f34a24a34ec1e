/**
 * Provider from model settings: `replay:FILE` is the offline replay model, any other name is a
 * Chat Completions model. Provider modules are imported only here, when needed, so importing
 * this file costs nothing.
 */
import { ModelError, type Provider } from "./types.js";

/** Resolved model settings (spec, environment and flags already merged; the key itself, not its variable name). */
export interface ModelSettings {
  name: string;
  baseURL?: string;
  apiKey?: string;
  temperature?: number;
  maxTokens?: number;
  stream?: boolean;
  maxRetries?: number;
  timeoutMs?: number;
}

export const REPLAY_PREFIX = "replay:";

export async function createProvider(model: ModelSettings): Promise<Provider> {
  if (model.name.startsWith(REPLAY_PREFIX)) {
    const file = model.name.slice(REPLAY_PREFIX.length);
    if (file.trim() === "") throw new ModelError(`model "${model.name}" names no file: use replay:FILE, e.g. replay:runs/demo.jsonl`);
    const { createReplayProvider } = await import("./replay.js");
    return createReplayProvider(file);
  }
  const { createOpenAIProvider } = await import("./openai.js");
  return createOpenAIProvider({
    model: model.name,
    baseURL: model.baseURL,
    apiKey: model.apiKey,
    temperature: model.temperature,
    maxTokens: model.maxTokens,
    stream: model.stream,
    maxRetries: model.maxRetries,
    timeoutMs: model.timeoutMs,
  });
}
