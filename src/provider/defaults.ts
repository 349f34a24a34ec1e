/**
 * The model client's defaults, the one home: the OpenAI provider applies them, and the spec
 * resolver (config/) shows and fills in the same values.
 */
export const MODEL_DEFAULTS = {
  /** Stream, and stop streaming when the server cannot stream with tools. */
  stream: "auto",
  /** Retries after the first attempt. */
  maxRetries: 2,
  /** Inactivity limit per attempt, ms. */
  timeoutMs: 600_000,
  /** The variable the API key is read from. */
  apiKeyEnv: "OPENAI_API_KEY",
} as const;
