/** The built-in tools, created for one registry. A built-in can never be replaced by a file tool. */
import type { ToolRegistry } from "../registry.js";
import type { Tool } from "../types.js";
import { createListTools } from "./listTools.js";
import { createWriteTool } from "./writeTool.js";
import { BUILTIN_TOOL_NAMES, type BuiltinToolName } from "./names.js";
import type { CacheScope } from "../../cache-dir.js";

export interface BuiltinToolsContext {
  registry: ToolRegistry;
  /** Where writeTool writes (absolute); null when there is no folder. */
  writeToolDir: string | null;
  /** Whose module cache a written tool is loaded through (../../cache-dir.ts); default the process's. */
  cache?: CacheScope;
}

/** The named built-ins, in the order named. Throws on an unknown name. */
export function createBuiltinTools(names: BuiltinToolName[], ctx: BuiltinToolsContext): Tool[] {
  return names.map((name) => {
    switch (name) {
      case "listTools":
        return createListTools(ctx.registry) as Tool;
      case "writeTool":
        return createWriteTool(ctx) as Tool;
      default:
        throw new Error(`unknown built-in tool "${String(name)}" (known: ${BUILTIN_TOOL_NAMES.join(", ")})`);
    }
  });
}
