/**
 * Tool names for MCP tools. Rules (docs/mcp.md, "Naming"):
 * - `mcp__<server>__<tool>`; characters outside `[A-Za-z0-9_-]` become `_`;
 * - a name over 64 characters is cut and ends in `_` + 10 hex of a SHA-256 of server and raw
 *   tool name, so it is stable across runs;
 * - names that collide after that (two raw names that sanitise alike) are all given the hash
 *   suffix except a raw name that needed no change, so the outcome does not depend on order;
 *   each collision is reported, no tool is dropped.
 */
import { createHash } from "node:crypto";

export const MAX_TOOL_NAME_LENGTH = 64;
const HASH_LENGTH = 10;
export const MCP_PREFIX = "mcp__";

export interface NamedMcpTool {
  server: string;
  /** The server's own name for the tool (used for the call). */
  rawName: string;
  /** The name the model sees. */
  name: string;
}

function hashed(server: string, rawName: string, base: string): string {
  const hash = createHash("sha256").update(`${server}\0${rawName}`).digest("hex").slice(0, HASH_LENGTH);
  return `${base.slice(0, MAX_TOOL_NAME_LENGTH - HASH_LENGTH - 1)}_${hash}`;
}

/** The plain name: prefix, server, tool, sanitised; hashed when too long. */
export function mcpToolName(server: string, rawName: string): string {
  const base = `${MCP_PREFIX}${server}__${rawName}`.replace(/[^A-Za-z0-9_-]/g, "_");
  return base.length > MAX_TOOL_NAME_LENGTH ? hashed(server, rawName, base) : base;
}

/**
 * Names for `tools` (server, raw name pairs); `taken` are names already in use by other tools.
 * Returns the named tools in input order and one message per collision resolved.
 */
export function nameMcpTools(tools: Array<{ server: string; rawName: string }>, taken: Set<string> = new Set()): { named: NamedMcpTool[]; collisions: string[] } {
  const groups = new Map<string, Array<{ server: string; rawName: string }>>();
  for (const tool of tools) {
    const name = mcpToolName(tool.server, tool.rawName);
    groups.set(name, [...(groups.get(name) ?? []), tool]);
  }
  const named = new Map<string, string>();
  const collisions: string[] = [];
  for (const [name, group] of groups) {
    const clash = group.length > 1 || taken.has(name);
    for (const tool of group) {
      const exact = `${MCP_PREFIX}${tool.server}__${tool.rawName}` === name;
      const keep = !clash || (exact && !taken.has(name));
      named.set(`${tool.server}\0${tool.rawName}`, keep ? name : hashed(tool.server, tool.rawName, name));
    }
    if (clash) {
      const who = group.map((t) => `"${t.rawName}" (${t.server})`).join(", ");
      collisions.push(`MCP tool names ${who} all map to ${name}: ${group.map((t) => named.get(`${t.server}\0${t.rawName}`)).join(", ")}`);
    }
  }
  return { named: tools.map((t) => ({ ...t, name: named.get(`${t.server}\0${t.rawName}`)! })), collisions };
}
