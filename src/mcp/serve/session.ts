/**
 * What one `yiem mcp serve` process serves, whatever the transport: the tool list, the calls,
 * the calls in flight and the counts for the session's agentEnd. Rules:
 * - `list()` is exactly what `yiem run` would offer the model (the registry's tools its policy
 *   allows, in registry order: built-ins such as writeTool only when the spec enables them), then
 *   the agent tool when there is one;
 * - a call goes through ./call.ts; the agent tool through the same pipeline with a registry of its
 *   own (no hooks: they guard the spec's tools, which the agent's run calls with them);
 * - after every call, and when told (`checkToolsChanged`, e.g. an MCP server's list changed), the
 *   list is compared with the last one seen; a change (writeTool wrote a tool) calls every
 *   `onToolsChanged` listener once.
 */
import type { FinishedCall } from "../../loop/execute.js";
import { addUsage, zeroUsage } from "../../tools/usage.js";
import { ToolRegistry } from "../../tools/registry.js";
import type { Tool, Usage } from "../../tools/types.js";
import { CallGate, serveToolCall, type CallChannel, type McpCallResult, type ServedCallContext } from "./call.js";

export type ServeSessionOptions = Omit<ServedCallContext, "nextCallNumber" | "idPrefix"> & {
  /** The session's runId: call ids are `call_<its first 8 characters>_<n>`, as in a run. */
  runId: string;
  /** The agent tool (`--agent`), served after the spec's tools. */
  agentTool?: Tool;
};

export interface ServeSession {
  list(): Tool[];
  call(name: string, args: unknown, channel: CallChannel): Promise<McpCallResult>;
  onToolsChanged(listener: () => void): void;
  checkToolsChanged(): void;
  /** Resolves once no call is in flight. */
  idle(): Promise<void>;
  /** Calls answered, and the tokens their tools reported (the agent tool's runs included). */
  readonly totals: { calls: number; usage: Usage; errors: number };
}

export function createServeSession(options: ServeSessionOptions): ServeSession {
  const gate = new CallGate();
  const inFlight = new Set<Promise<unknown>>();
  const listeners: Array<() => void> = [];
  const totals = { calls: 0, usage: zeroUsage(), errors: 0 };
  let callNumber = 0;
  const ctx: ServedCallContext = { ...options, idPrefix: options.runId.slice(0, 8), nextCallNumber: () => ++callNumber };
  const agent = options.agentTool;
  const agentRegistry = agent ? registryOf(agent) : undefined;
  const agentCtx: ServedCallContext | undefined = agentRegistry ? { ...ctx, registry: agentRegistry, isToolAllowed: () => true, hooks: {} } : undefined;

  const list = (): Tool[] => [...options.registry.list().filter((t) => options.isToolAllowed(t.name)), ...(agent ? [agent] : [])];
  // The registry registers a new tool object for every change (writeTool, an MCP list change),
  // so comparing the objects finds every change without serialising the schemas after each call.
  let seen = list();

  const checkToolsChanged = () => {
    const now = list();
    if (now.length === seen.length && now.every((tool, i) => tool === seen[i])) return;
    seen = now;
    for (const listener of listeners) {
      try {
        listener();
      } catch {
        // a listener must not break a call
      }
    }
  };

  const account = (finished: FinishedCall) => {
    totals.calls++;
    if (finished.isError) totals.errors++;
    addUsage(totals.usage, finished.result.usage);
  };

  return {
    list,
    totals,
    onToolsChanged: (listener) => void listeners.push(listener),
    checkToolsChanged,
    async call(name, args, channel) {
      const useAgent = agent !== undefined && name === agent.name && agentCtx !== undefined;
      const work = serveToolCall(name, args, channel, useAgent ? agentCtx : ctx, gate);
      inFlight.add(work);
      try {
        const { result, finished } = await work;
        account(finished);
        if (useAgent && result._meta?.details) result._meta = { ...(result._meta.details as Record<string, unknown>), ...(result._meta.usage ? { usage: result._meta.usage } : {}) };
        return result;
      } finally {
        inFlight.delete(work);
        checkToolsChanged();
      }
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}

function registryOf(tool: Tool): ToolRegistry {
  const registry = new ToolRegistry();
  registry.register(tool, { kind: "builtin" });
  return registry;
}
