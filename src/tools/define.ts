/** Helpers for writing tools: `defineTool`, `textContent`, `toolResult`, and the shape check. */
import type { ContentPart, TextContent, Tool, ToolResult } from "./types.js";

/** Names a tool may have: a letter, then letters, digits, `_` or `-`; 64 characters at most. */
export const TOOL_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** Names yiem writes tool files for (writeTool, `yiem tools new`): every tool name (`my-tool.ts` is a safe file name). */
export const GENERATED_TOOL_NAME_PATTERN = TOOL_NAME_PATTERN;

/** Identity with types: `export default defineTool({...})`. */
export function defineTool<TArgs = any, TDetails = unknown>(tool: Tool<TArgs, TDetails>): Tool<TArgs, TDetails> {
  return tool;
}

export function textContent(text: string): TextContent {
  return { type: "text", text };
}

/** A result from text (or content parts) with optional details and flags. */
export function toolResult<TDetails = unknown>(
  content: string | ContentPart[],
  extra: Omit<ToolResult<TDetails>, "content"> = {},
): ToolResult<TDetails> {
  return { content: typeof content === "string" ? [textContent(content)] : content, ...extra };
}

/** Why `value` is not a usable tool, or null when it is. */
export function checkToolShape(value: unknown): string | null {
  if (value === null || typeof value !== "object") return "the export is not an object";
  const t = value as Record<string, unknown>;
  if (typeof t.name !== "string" || !TOOL_NAME_PATTERN.test(t.name)) {
    return `"name" must match ${TOOL_NAME_PATTERN} (got ${JSON.stringify(t.name)})`;
  }
  for (const key of ["label", "description"] as const) {
    if (typeof t[key] !== "string") return `"${key}" must be a string`;
  }
  const schemaProblem = inputSchemaProblem(t.inputSchema);
  if (schemaProblem) return schemaProblem;
  if (typeof t.execute !== "function") return `"execute" must be a function`;
  for (const key of ["prepareArguments", "validateRequiredArgs"] as const) {
    if (t[key] !== undefined && typeof t[key] !== "function") return `"${key}" must be a function when given`;
  }
  if (t.parallelToolExecute !== undefined && typeof t.parallelToolExecute !== "boolean") {
    return `"parallelToolExecute" must be a boolean when given`;
  }
  if (t.timeoutMs !== undefined && (typeof t.timeoutMs !== "number" || !(t.timeoutMs >= 0))) {
    return `"timeoutMs" must be a non-negative number when given`;
  }
  return null;
}

/**
 * Why `schema` is not a tool input schema, or undefined when it is one: the one rule that a tool's
 * arguments are an object, so its schema is an object with `type: "object"` (the shape check of
 * every tool, command manifests and writeTool drafts).
 */
export function inputSchemaProblem(schema: unknown): string | undefined {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return `"inputSchema" must be an object`;
  if ((schema as Record<string, unknown>).type !== "object") return `"inputSchema.type" must be "object"`;
  return undefined;
}
