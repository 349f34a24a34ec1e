/** Token usage arithmetic. */
import type { Usage } from "../tools/types.js";

export function zeroUsage(): Usage {
  return { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
}

/** Adds `more` into `total` (missing or invalid fields count as 0; totalTokens derived when absent; cachedPromptTokens kept only once some were reported; costUsd is never summed: it is priced from the sums, loop/cost.ts). */
export function addUsage(total: Usage, more: Partial<Usage> | undefined): void {
  if (!more) return;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.round(v) : 0);
  const prompt = n(more.promptTokens);
  const completion = n(more.completionTokens);
  total.promptTokens += prompt;
  total.completionTokens += completion;
  total.totalTokens += more.totalTokens !== undefined ? n(more.totalTokens) : prompt + completion;
  const cached = n(more.cachedPromptTokens);
  if (cached > 0) total.cachedPromptTokens = (total.cachedPromptTokens ?? 0) + cached;
}
