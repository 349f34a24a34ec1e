/**
 * The provider of a resolved spec's `model` section: the one mapping from spec settings to
 * `createProvider`, for `yiem run` and the agent tool of `yiem mcp serve`.
 */
import type { ResolvedSpec } from "../config/types.js";
import { createProvider } from "../provider/create.js";
import type { OpenAIProviderOptions } from "../provider/openai.js";
import type { Provider } from "../provider/types.js";

/**
 * Import this module where the provider is needed (it loads provider/create.js, not the openai
 * package). `env` is the call's environment (io.env): the provider reads its defaults there,
 * never in the process's own.
 */
export async function providerFor(spec: ResolvedSpec, env: NodeJS.ProcessEnv, extra: Pick<OpenAIProviderOptions, "onHttp" | "fetch"> = {}): Promise<Provider> {
  return createProvider({
    env,
    name: spec.model.replayFile ? `replay:${spec.model.replayFile}` : spec.model.name,
    baseURL: spec.model.baseURL,
    apiKey: spec.model.apiKey,
    apiKeyEnv: spec.model.apiKeyEnv,
    temperature: spec.model.temperature,
    maxTokens: spec.model.maxTokens,
    maxTokensField: spec.model.maxTokensField,
    stream: spec.model.stream,
    streamUsage: spec.model.streamUsage,
    textToolCalls: spec.model.textToolCalls,
    maxRetries: spec.model.maxRetries,
    timeoutMs: spec.model.timeoutMs,
    ...extra,
  });
}
