/**
 * Token usage arithmetic, the one rule for every source (the wire, replay files, tool results,
 * hooks): a token count is a finite positive number rounded down (a count never grows past what
 * was reported); anything else counts as 0.
 */
import type { Usage } from "./types.js";

export function zeroUsage(): Usage {
  return { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
}

/** A token count by the module rule. */
export function tokenCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/**
 * Adds `more` into `total` (missing or invalid fields count as 0; totalTokens derived when absent;
 * cachedPromptTokens kept only once some were reported; costUsd is never summed: it is priced
 * from the sums, ../loop/cost.ts).
 */
export function addUsage(total: Usage, more: Partial<Usage> | undefined): void {
  if (!more) return;
  const prompt = tokenCount(more.promptTokens);
  const completion = tokenCount(more.completionTokens);
  total.promptTokens += prompt;
  total.completionTokens += completion;
  total.totalTokens += more.totalTokens !== undefined ? tokenCount(more.totalTokens) : prompt + completion;
  const cached = tokenCount(more.cachedPromptTokens);
  if (cached > 0) total.cachedPromptTokens = (total.cachedPromptTokens ?? 0) + cached;
}
