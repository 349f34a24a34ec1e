/**
 * The `listTools` built-in: every tool the run offers (name, label, description), as text for the
 * model (`Available tools:`, then one `- name: label — description` line per tool) and as `details`
 * (an array of `{name, label, description}`), e.g. to avoid a name collision before calling
 * writeTool. Rules: it reads the run's offer at call time (`execute`'s run context), so tools added
 * during the run are listed; a tool the run's policy denies (`tools.allow`/`tools.deny`,
 * `--allow-tools`/`--deny-tools`, the `isToolAllowed` of `runAgent`) is never listed, also when
 * other runs with other policies share the registry.
 */
import { toolResult } from "../define.js";
import type { ToolRegistry } from "../registry.js";
import type { Tool } from "../types.js";

export interface ListedTool {
  name: string;
  label: string;
  description: string;
}

export function createListTools(registry: ToolRegistry): Tool<Record<string, never>, ListedTool[]> {
  return {
    name: "listTools",
    label: "List tools",
    description:
      "Lists every tool available in this run with its name, label and description. " +
      "Use it to see what you can call, or to check that a name is free before writing a new tool.",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
    execute(_toolCallId, _args, _signal, _onPartial, run) {
      // The calling run's offer (its own policy); outside a run, what the registry offers.
      const tools: ListedTool[] = (run?.offeredTools() ?? registry.offered()).map((t) => ({ name: t.name, label: t.label, description: t.description }));
      return toolResult(formatToolTable(tools), { details: tools });
    },
  };
}

/** `Available tools:` then a `- name: label — description` line per tool (white space runs collapsed). */
export function formatToolTable(tools: ListedTool[]): string {
  if (tools.length === 0) return "Available tools: none.";
  const flat = (s: string) => s.replace(/\s+/g, " ").trim();
  return ["Available tools:", ...tools.map((t) => `- ${t.name}: ${flat(t.label)} — ${flat(t.description)}`)].join("\n");
}
