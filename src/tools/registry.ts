/**
 * The set of tools a run can call, by name, in load order. Rules:
 * - a registry may carry registry-wide policies (`applyPolicy`): a tool is offered to every user
 *   of the registry only when every active policy allows it (none by default). A run's own policy
 *   never goes here: it is the run's (loop/run-state.ts), so runs side by side on one registry
 *   each see exactly their own tools;
 * - `registerTool(tool)` adds to `defaultToolRegistry`, the one `runAgent` uses when given none.
 */
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
  private readonly policies = new Set<(name: string) => boolean>();

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

  /** Removes a tool (MCP tools a server no longer lists); a builtin is never removed. */
  unregister(name: string): boolean {
    if (this.byName.get(name)?.source.kind === "builtin") return false;
    return this.byName.delete(name);
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

  /** Whether every active policy allows `name` (true with none). */
  isOffered(name: string): boolean {
    for (const allows of this.policies) if (!allows(name)) return false;
    return true;
  }

  /** The tools every active policy allows, in registration order. */
  offered(): Tool[] {
    return this.list().filter((t) => this.isOffered(t.name));
  }

  /** Makes `isAllowed` an active policy until the returned function is called. */
  applyPolicy(isAllowed: (name: string) => boolean): () => void {
    const policy = (name: string) => isAllowed(name);
    this.policies.add(policy);
    return () => {
      this.policies.delete(policy);
    };
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
  if (source.kind === "mcp") return `MCP server ${source.server}`;
  return source.path ?? source.kind;
}

/** The registry `registerTool(tool)` adds to and `runAgent` uses when it is given none. */
export const defaultToolRegistry = new ToolRegistry();

/**
 * Adds a tool (see `ToolRegistry.register`): `registerTool(tool)` to `defaultToolRegistry`, or
 * `registerTool(registry, tool)` to `registry`. Returns the registry it added to.
 */
export function registerTool(tool: Tool, source?: ToolSource): ToolRegistry;
export function registerTool(registry: ToolRegistry, tool: Tool, source?: ToolSource): ToolRegistry;
export function registerTool(first: ToolRegistry | Tool, second?: Tool | ToolSource, third?: ToolSource): ToolRegistry {
  if (isRegistry(first)) {
    first.register(second as Tool, third);
    return first;
  }
  defaultToolRegistry.register(first, second as ToolSource | undefined);
  return defaultToolRegistry;
}

/** A registry, also one from another copy of this module (a tool is never one: it has `execute`). */
function isRegistry(value: ToolRegistry | Tool): value is ToolRegistry {
  return value instanceof ToolRegistry || (typeof (value as Partial<ToolRegistry>).register === "function" && typeof (value as Partial<Tool>).execute !== "function");
}
