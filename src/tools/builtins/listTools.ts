/**
 * The `listTools` built-in: every tool of the registry (name, label, description), as a text table
 * for the model and as `details` (an array of `{name, label, description}`), e.g. to avoid a name
 * collision before calling writeTool. It reads the registry at call time, so tools added during
 * the run are listed.
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
    execute() {
      const tools: ListedTool[] = registry.list().map((t) => ({ name: t.name, label: t.label, description: t.description }));
      return toolResult(formatToolTable(tools), { details: tools });
    },
  };
}

/** `name | label | description` lines, one tool per line (white space runs collapsed). */
export function formatToolTable(tools: ListedTool[]): string {
  if (tools.length === 0) return "No tools are available.";
  const flat = (s: string) => s.replace(/\s+/g, " ").trim();
  const rows = tools.map((t) => `${t.name} | ${flat(t.label)} | ${flat(t.description)}`);
  return [`${tools.length} tool${tools.length === 1 ? "" : "s"}:`, "name | label | description", ...rows].join("\n");
}
