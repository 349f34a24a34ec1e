/** The set of tools a run can call, by name, in load order. */
import { checkToolShape } from "./define.js";
import type { Tool, ToolInfo, ToolLoadProblem, ToolSource } from "./types.js";

export interface RegisteredTool {
  tool: Tool;
  source: ToolSource;
}

export class ToolRegistry {
  private readonly byName = new Map<string, RegisteredTool>();
  /** Files that failed to load; filled by the loader. */
  readonly problems: ToolLoadProblem[] = [];

  /**
   * Adds a tool. Throws when its shape is invalid, or when the name is taken and `replace`
   * is not set; a builtin is never replaced.
   */
  register(tool: Tool, source: ToolSource = { kind: "registered" }, options: { replace?: boolean } = {}): void {
    const problem = checkToolShape(tool);
    if (problem) throw new Error(`invalid tool${source.path ? ` in ${source.path}` : ""}: ${problem}`);
    const existing = this.byName.get(tool.name);
    if (existing) {
      if (existing.source.kind === "builtin") throw new Error(`"${tool.name}" is a built-in tool and cannot be replaced`);
      if (!options.replace) {
        throw new Error(
          `duplicate tool name "${tool.name}": ${describeSource(existing.source)} and ${describeSource(source)}`,
        );
      }
    }
    this.byName.set(tool.name, { tool, source });
  }

  get(name: string): Tool | undefined {
    return this.byName.get(name)?.tool;
  }

  entry(name: string): RegisteredTool | undefined {
    return this.byName.get(name);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Tools in registration order. */
  list(): Tool[] {
    return [...this.byName.values()].map((e) => e.tool);
  }

  entries(): RegisteredTool[] {
    return [...this.byName.values()];
  }

  infos(): ToolInfo[] {
    return this.entries().map(({ tool, source }) => ({
      name: tool.name,
      label: tool.label,
      description: tool.description,
      inputSchema: tool.inputSchema,
      parallelToolExecute: tool.parallelToolExecute !== false,
      source,
    }));
  }
}

export function describeSource(source: ToolSource): string {
  return source.path ?? source.kind;
}

/** Adds `tool` to `registry` (see `ToolRegistry.register`). */
export function registerTool(registry: ToolRegistry, tool: Tool, source?: ToolSource): void {
  registry.register(tool, source);
}
