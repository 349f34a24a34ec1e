/**
 * What one run keeps for itself, never on a shared object (the registry, a provider), so many
 * runs can share one registry side by side: the tools its policy offers, its call-id counter and
 * its loop-detection counts.
 *
 * Rules:
 * - A tool is offered to the run when the run's policy allows it and the registry offers it
 *   (`ToolRegistry.isOffered`: registry-wide policies, none by default); the offer is read at
 *   call time, so tools added during the run are offered from the next turn.
 * - Ids the model left out are `call_<first 8 of runId>_<n>`, n counting from 1 in this run.
 * - Loop detection: per call (same tool, same arguments), the turns in a row that made it; a
 *   call missing from a turn starts over; identical calls within one response count once.
 */
import type { ToolCall } from "../provider/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { Tool, ToolRunContext } from "../tools/types.js";

export interface RunState extends ToolRunContext {
  /** A new call id for a call the model sent without one. */
  nextCallId(): string;
  /** Counts this turn's calls (module rules); returns the longest run of repeats it reached. */
  countRepeats(calls: ToolCall[]): { name: string; count: number };
}

export function createRunState(runId: string, registry: ToolRegistry, isToolAllowed: (name: string) => boolean): RunState {
  let idCounter = 0;
  const repeats = new Map<string, number>();
  const isOffered = (name: string) => isToolAllowed(name) && registry.isOffered(name);
  return {
    isOffered,
    offeredTools: (): Tool[] => registry.list().filter((tool) => isOffered(tool.name)),
    nextCallId: () => `call_${runId.slice(0, 8)}_${++idCounter}`,
    countRepeats: (calls) => countRepeats(calls, repeats),
  };
}

function countRepeats(calls: ToolCall[], counts: Map<string, number>): { name: string; count: number } {
  const longest = { name: "", count: 0 };
  const thisTurn = new Map<string, number>();
  for (const call of calls) {
    const signature = `${call.name}\u0000${normalizeArgs(call.arguments)}`;
    if (thisTurn.has(signature)) continue;
    const count = (counts.get(signature) ?? 0) + 1;
    thisTurn.set(signature, count);
    if (count > longest.count) Object.assign(longest, { name: call.name, count });
  }
  counts.clear();
  for (const [signature, count] of thisTurn) counts.set(signature, count);
  return longest;
}

function normalizeArgs(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw));
  } catch {
    return raw;
  }
}
