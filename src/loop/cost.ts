/**
 * What a run costs, from the prices the spec states (`model.pricing`, USD per million tokens).
 * Rules (docs/spec.md, "Cost"):
 * - No built-in price table: without pricing nothing is priced and no `costUsd` appears.
 * - Cached prompt tokens (when the server reports them) cost `cachedInputPerMTok`, else
 *   `inputPerMTok`; the other prompt tokens cost `inputPerMTok`, completion tokens `outputPerMTok`.
 *   Tokens a tool reports are priced the same way.
 * - A cost is rounded to 1e-10 USD, so sums print without float noise.
 * - `limits.maxCostUsd` (> 0) is spent once the run's cost is above it, exactly as the token
 *   budget: checked after each model response, a final answer is still delivered.
 */
import type { AgentEvent, EventSink, Pricing } from "./types.js";

import type { Usage } from "../tools/types.js";

/** The cost of `usage` in USD (see module rules). */
export function costOf(usage: Usage, pricing: Pricing): number {
  const cached = Math.min(usage.cachedPromptTokens ?? 0, usage.promptTokens);
  const usd =
    ((usage.promptTokens - cached) * pricing.inputPerMTok +
      cached * (pricing.cachedInputPerMTok ?? pricing.inputPerMTok) +
      usage.completionTokens * pricing.outputPerMTok) / 1_000_000;
  return Math.round(usd * 1e10) / 1e10;
}

/** A copy of `usage` with its `costUsd` when `pricing` is set; `usage` itself (unchanged) when not. */
export function pricedUsage(usage: Usage, pricing: Pricing | undefined): Usage {
  if (!pricing) return usage;
  return { ...usage, costUsd: costOf(usage, pricing) };
}

/**
 * `event` with `costUsd` on its usage object (messageEnd, turnEnd, agentEnd) and, on agentEnd,
 * the run's `costUsd` beside it; `event` itself when nothing is priced.
 */
export function pricedEvent(event: AgentEvent, pricing: Pricing | undefined): AgentEvent {
  if (!pricing || !("usage" in event) || !event.usage) return event;
  const usage = pricedUsage(event.usage, pricing);
  const priced = { ...event, usage } as AgentEvent;
  if (priced.type === "agentEnd") priced.costUsd = usage.costUsd;
  return priced;
}

/** An event sink that prices every event (`pricedEvent`); the sink itself when nothing is priced. */
export function withCosts(sink: EventSink | undefined, pricing: Pricing | undefined): EventSink | undefined {
  if (!sink || !pricing) return sink;
  return (event) => sink(pricedEvent(event, pricing));
}

/** The cost-budget check of the loop: the message when `usage` costs more than `maxCostUsd`, else null. */
export function costBudgetExceeded(usage: Usage, pricing: Pricing | undefined, maxCostUsd: number): string | null {
  if (!pricing || !(maxCostUsd > 0)) return null;
  const cost = costOf(usage, pricing);
  return cost > maxCostUsd ? `cost budget exceeded: $${cost} > $${maxCostUsd}` : null;
}
