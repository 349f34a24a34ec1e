/**
 * The MCP servers of one command: connected together, their tools in the registry, closed on
 * every exit path. Rules (docs/mcp.md):
 * - every server connects in parallel; `startMcp` resolves once all are ready or failed;
 * - a ConfigError of any server (command not found) is thrown as is: exit 2;
 * - a required server that failed makes `startMcp` throw McpRequiredError (exit 1) after closing
 *   the others; its message names each failed server, the phase and the stderr tail;
 * - an optional server that failed only costs its tools (an mcpServerError event);
 * - a server's tools pass its `tools.allow/deny` (on the server's own names), are named by
 *   names.ts and registered with source `{kind: "mcp", server}`; a name a local tool has is a
 *   ConfigError; a collision among MCP names is resolved and reported as a warning;
 * - tools/list_changed replaces the server's tools in the registry (offered from the next turn)
 *   and emits mcpToolsChanged; a server that goes away after start emits mcpServerError (runtime)
 *   and its calls fail as error results.
 */
import { ConfigError } from "../config/errors.js";
import type { ResolvedMcpServer } from "../config/types.js";
import type { AgentEventBody, McpServerStatus } from "../loop/types.js";
import { createToolPolicy } from "../tools/policy.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { Tool as McpToolDef } from "@modelcontextprotocol/client";
import { connectServer, McpStartError, type McpConnection } from "./connection.js";
import { nameMcpTools } from "./names.js";
import { toYiemTool } from "./tools.js";
import { messageOf } from "../error-text.js";

export type McpEmit = (body: AgentEventBody) => void;

import { McpRequiredError } from "./required-error.js";

export interface McpSession {
  /** For agentStart. */
  servers: McpServerStatus[];
  /** Ready and error events of the start, in server order, plus collision warnings. */
  startEvents: AgentEventBody[];
  connections: McpConnection[];
  /** Later events (list changes, runtime errors) go to `emit` from now on. */
  attach(emit: McpEmit): void;
  /** Closes every server (stdin, wait, then the whole process group). Idempotent. */
  close(): Promise<void>;
}

export interface StartMcpOptions {
  clientVersion: string;
  signal?: AbortSignal;
  /** The parent environment of stdio servers (the CLI's io.env); default the process's. */
  env?: NodeJS.ProcessEnv;
}

export async function startMcp(servers: ResolvedMcpServer[], registry: ToolRegistry, options: StartMcpOptions): Promise<McpSession> {
  const settled = await Promise.allSettled(servers.map((server) => connectServer(server, options.clientVersion, options.signal, options.env)));
  const connections = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const closeAll = () => Promise.all(connections.map((c) => c.close())).then(() => {});
  const configError = settled.find((s) => s.status === "rejected" && s.reason instanceof ConfigError);
  if (configError) {
    await closeAll();
    throw (configError as PromiseRejectedResult).reason;
  }
  const events: AgentEventBody[] = [];
  const statuses: McpServerStatus[] = [];
  const requiredFailures: McpStartError[] = [];
  const failureEvents: AgentEventBody[] = [];
  const namesByServer = new Map<string, string[]>();
  try {
    for (const [index, outcome] of settled.entries()) {
      const server = servers[index];
      if (outcome.status === "rejected") {
        const failure = outcome.reason instanceof McpStartError
          ? outcome.reason
          : new McpStartError(server.name, server.transport === "stdio" ? "spawn" : "connect", messageOf(outcome.reason), "");
        const event: AgentEventBody = { type: "mcpServerError", server: server.name, phase: failure.phase, required: server.required, message: failure.reason, stderrTail: failure.stderrTail };
        failureEvents.push(event);
        events.push(event);
        if (server.required) requiredFailures.push(failure);
        statuses.push({ name: server.name, transport: server.transport, status: "failed", required: server.required, tools: [] });
      }
    }
    if (requiredFailures.length > 0) throw new McpRequiredError(requiredFailures, failureEvents);

    const ready = connections;
    const { named, collisions } = nameMcpTools(ready.flatMap((c) => filtered(c).map((def) => ({ server: c.server.name, rawName: def.name }))));
    for (const message of collisions) events.push({ type: "warning", message });
    for (const connection of ready) {
      const mine = named.filter((n) => n.server === connection.server.name);
      const defs = new Map(filtered(connection).map((d) => [d.name, d]));
      for (const n of mine) {
        const local = registry.entry(n.name);
        if (local) {
          throw new ConfigError(`MCP server "${n.server}": its tool "${n.rawName}" would be offered as "${n.name}", which is the name of a local tool (${local.source.path ?? local.source.kind}); rename the local tool or deny the MCP tool in mcpServers.${n.server}.tools.deny`);
        }
        registry.register(withOrigin(toYiemTool(connection, defs.get(n.rawName)!, n.name), n.server, n.rawName), { kind: "mcp", server: n.server });
      }
      namesByServer.set(connection.server.name, mine.map((n) => n.name));
    }
  } catch (error) {
    await closeAll();
    throw error;
  }
  for (const connection of connections) {
    const index = servers.indexOf(connection.server);
    const tools = namesByServer.get(connection.server.name) ?? [];
    statuses.splice(statusIndex(statuses, servers, index), 0, {
      name: connection.server.name, transport: connection.server.transport, status: "ready", required: connection.server.required, tools,
    });
    events.splice(eventIndex(events, servers, index), 0, {
      type: "mcpServerReady", server: connection.server.name, transport: connection.server.transport,
      protocolVersion: connection.protocolVersion, serverInfo: connection.serverInfo, tools, durationMs: connection.durationMs,
    });
  }

  let emit: McpEmit | null = null;
  const pending: AgentEventBody[] = [];
  const send = (body: AgentEventBody) => (emit ? emit(body) : pending.push(body));
  let closed = false;
  for (const connection of connections) {
    connection.onLost = (reason) => {
      if (closed) return;
      send({ type: "mcpServerError", server: connection.server.name, phase: "runtime", required: connection.server.required, message: reason, stderrTail: connection.stderrTail() });
    };
    connection.onToolsChanged = (defs, error) => {
      if (closed) return;
      if (error) {
        send({ type: "warning", message: `MCP server ${connection.server.name}: the changed tool list could not be read: ${error.message}` });
        return;
      }
      const before = namesByServer.get(connection.server.name) ?? [];
      const allowed = filterDefs(connection, defs);
      const { named } = nameMcpTools(allowed.map((d) => ({ server: connection.server.name, rawName: d.name })));
      const byRaw = new Map(allowed.map((d) => [d.name, d]));
      for (const name of before) registry.unregister(name);
      const after: string[] = [];
      for (const n of named) {
        if (registry.has(n.name)) {
          // A local tool keeps its name; the new MCP tool is not offered, and that is said.
          send({ type: "warning", message: `MCP server ${n.server}: its new tool "${n.rawName}" is not offered: "${n.name}" is the name of a local tool` });
          continue;
        }
        registry.register(withOrigin(toYiemTool(connection, byRaw.get(n.rawName)!, n.name), n.server, n.rawName), { kind: "mcp", server: n.server });
        after.push(n.name);
      }
      namesByServer.set(connection.server.name, after);
      const added = after.filter((n) => !before.includes(n));
      const removed = before.filter((n) => !after.includes(n));
      if (added.length > 0 || removed.length > 0) send({ type: "mcpToolsChanged", server: connection.server.name, added, removed });
    };
  }
  return {
    servers: statuses,
    startEvents: events,
    connections,
    attach(next) {
      emit = next;
      for (const body of pending.splice(0)) next(body);
    },
    async close() {
      if (closed) return;
      closed = true;
      await closeAll();
    },
  };
}

function filtered(connection: McpConnection): McpToolDef[] {
  return filterDefs(connection, connection.tools);
}

function filterDefs(connection: McpConnection, defs: McpToolDef[]): McpToolDef[] {
  const allows = createToolPolicy(connection.server.tools.allow, connection.server.tools.deny);
  return defs.filter((d) => typeof d?.name === "string" && d.name !== "" && allows(d.name));
}

function withOrigin<T extends { mcp?: unknown }>(tool: T, server: string, rawName: string): T {
  return { ...tool, mcp: { server, tool: rawName } };
}

/** Where the status of `servers[index]` goes so statuses stay in server order. */
function statusIndex(statuses: McpServerStatus[], servers: ResolvedMcpServer[], index: number): number {
  const position = statuses.findIndex((s) => servers.findIndex((srv) => srv.name === s.name) > index);
  return position < 0 ? statuses.length : position;
}

function eventIndex(events: AgentEventBody[], servers: ResolvedMcpServer[], index: number): number {
  const position = events.findIndex((e) => "server" in e && servers.findIndex((srv) => srv.name === (e as { server: string }).server) > index);
  return position < 0 ? events.length : position;
}
