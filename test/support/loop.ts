/** Helpers for loop tests: a registry from tools, an event collector, and a run wrapper. */
import { runAgent } from "../../src/loop/run-agent.js";
import type { AgentEvent, RunAgentOptions } from "../../src/loop/types.js";
import { createScriptedProvider, type ScriptStep } from "../../src/provider/scripted.js";
import { defineTool, toolResult } from "../../src/tools/define.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { Tool } from "../../src/tools/types.js";

export function registryOf(...tools: Tool[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const tool of tools) registry.register(tool);
  return registry;
}

export async function runScripted(
  script: ScriptStep[],
  tools: Tool[],
  options: Partial<RunAgentOptions> = {},
) {
  const provider = createScriptedProvider(script);
  const events: AgentEvent[] = [];
  const result = await runAgent({
    provider,
    registry: options.registry ?? registryOf(...tools),
    messages: [{ role: "user", content: "go" }],
    onEvent: (e) => events.push(e),
    ...options,
  });
  const types = events.map((e) => e.type);
  const ofType = <T extends AgentEvent["type"]>(type: T) => events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);
  return { result, events, types, ofType, provider };
}

/** A tool that echoes its arguments; `log` records start/end order. */
export function echoTool(name = "echo", extra: Partial<Tool> = {}, log?: string[]): Tool {
  return defineTool({
    name,
    label: name,
    description: `echoes (${name})`,
    inputSchema: { type: "object", properties: { text: { type: "string" } }, additionalProperties: false },
    async execute(id, args: { text?: string }) {
      log?.push(`start:${name}:${id}`);
      await new Promise((r) => setTimeout(r, 5));
      log?.push(`end:${name}:${id}`);
      return toolResult(`echo:${args.text ?? ""}`, { details: { args } });
    },
    ...extra,
  });
}

/** A tool that waits until released, recording start and end in `log`. */
export function gateTool(name: string, log: string[], waitMs = 30, extra: Partial<Tool> = {}): Tool {
  return defineTool({
    name,
    label: name,
    description: name,
    inputSchema: { type: "object", properties: { n: { type: "number" } } },
    async execute(id) {
      log.push(`start:${id}`);
      await new Promise((r) => setTimeout(r, waitMs));
      log.push(`end:${id}`);
      return toolResult(`done ${id}`);
    },
    ...extra,
  });
}

export function toolMessages(messages: Array<{ role: string }>) {
  return messages.filter((m) => m.role === "tool") as Array<{ role: "tool"; toolCallId: string; toolName: string; content: Array<{ type: string; text?: string }>; isError: boolean }>;
}

export function textOf(content: Array<{ type: string; text?: string }>): string {
  return content.map((p) => p.text ?? "").join("");
}
