/**
 * A provider wrapper whose streamed text deltas never show a secret, even one split across
 * deltas (see `createStreamRedactor`). Only what is reported through `onTextDelta` changes: the
 * response itself, and so the conversation the model sees, is untouched.
 */
import { createStreamRedactor } from "../redact.js";
import type { ModelRequest, ModelResponse, Provider } from "./types.js";

export function withRedactedDeltas(inner: Provider, secrets: readonly string[]): Provider {
  if (secrets.every((s) => s === "")) return inner;
  const wrapped: Provider = {
    model: inner.model,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const report = request.onTextDelta;
      if (!report) return inner.complete(request);
      const redactor = createStreamRedactor(secrets);
      const onTextDelta = (delta: string) => {
        const safe = redactor.push(delta);
        if (safe !== "") report(safe);
      };
      try {
        return await inner.complete({ ...request, onTextDelta });
      } finally {
        const rest = redactor.flush();
        if (rest !== "") report(rest);
      }
    },
  };
  if (inner.describeRequest) wrapped.describeRequest = inner.describeRequest.bind(inner);
  return wrapped;
}
