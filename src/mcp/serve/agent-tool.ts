/**
 * The agent tool of `yiem mcp serve --agent [NAME]`: one tool that runs the spec's whole agent
 * loop on a prompt. Rules:
 * - arguments `{prompt, stdin?}` (validated like any tool's); the messages are the spec's system
 *   prompt and one user message: the prompt, then `stdin` after a blank line, as
 *   `yiem run "PROMPT" < stdin` builds it;
 * - every call is its own run: its own runId, provider, limits (the spec's, the run timeout
 *   included), loop state and events (agentStart … agentEnd on stderr); calls may overlap;
 * - the tools the run gets are the served ones (same registry, policy and hooks); the agent tool
 *   itself is not among them;
 * - the result: the run's final text; `details` carries runId, stopReason, turns, toolCalls,
 *   durationMs (and error), `usage` the run's tokens. A run that ended other than `completed` or
 *   `terminated` is an error result whose text says how it ended;
 * - progress: each model turn and each tool call the run starts is one `onPartialResult`;
 * - the call's signal aborts the run (its tools get it, command tools end their groups).
 */
import type { ResolvedSpec } from "../../config/types.js";
import type { AgentEvent, AgentHooks, RunResult } from "../../loop/types.js";
import type { ChatMessage, Provider } from "../../provider/types.js";
import type { ToolRegistry } from "../../tools/registry.js";
import type { JsonSchema, Tool, ToolResult } from "../../tools/types.js";

export const DEFAULT_AGENT_TOOL_NAME = "agent";

export const AGENT_TOOL_INPUT_SCHEMA: JsonSchema = {
  type: "object",
  properties: {
    prompt: { type: "string", minLength: 1, description: "The task for the agent, as you would give it to `yiem run`." },
    stdin: { type: "string", description: "Optional context (a file's text, a diff, logs), added after the prompt as piped stdin is." },
  },
  required: ["prompt"],
  additionalProperties: false,
};

/** What one agent run is made of (the command builds it from the spec). */
export interface AgentToolOptions {
  name: string;
  spec: ResolvedSpec;
  registry: ToolRegistry;
  isToolAllowed: (name: string) => boolean;
  hooks: AgentHooks;
  /** A new provider per run. */
  newProvider(): Promise<Provider>;
  /** The run's first messages for a prompt and its stdin text (the command composes them as `yiem run` does). */
  messagesFor(prompt: string, stdin: string | null): ChatMessage[];
  /** Every event of every agent run (already redacted by the caller as it needs). */
  onEvent(event: AgentEvent): void;
  yiemVersion: string;
}

/** The `details` of an agent tool result (also its `_meta`, see ./call.ts). */
export interface AgentRunDetails {
  runId: string;
  stopReason: RunResult["stopReason"];
  turns: number;
  toolCalls: number;
  durationMs: number;
  error?: string;
}

export function createAgentTool(options: AgentToolOptions): Tool<{ prompt: string; stdin?: string }, AgentRunDetails> {
  const about = options.spec.name ? `the "${options.spec.name}" agent` : "the agent of this yiem spec";
  return {
    name: options.name,
    label: options.spec.name ?? "agent",
    description: `Runs ${about} on a prompt (a whole tool-calling run with its own tools) and returns its final answer.${options.spec.systemPrompt ? ` Its instructions begin: ${options.spec.systemPrompt.slice(0, 200).replace(/\s+/g, " ")}` : ""}`,
    inputSchema: AGENT_TOOL_INPUT_SCHEMA,
    async execute(_toolCallId, args, signal, onPartialResult) {
      const [{ runAgent }, provider] = await Promise.all([import("../../loop/run-agent.js"), options.newProvider()]);
      const messages = options.messagesFor(args.prompt, args.stdin ?? null);
      const run = await runAgent({
        provider,
        registry: options.registry,
        messages,
        toolExecution: options.spec.toolExecution,
        limits: options.spec.limits,
        hooks: options.hooks,
        isToolAllowed: options.isToolAllowed,
        signal,
        ...(options.spec.model.pricing ? { pricing: options.spec.model.pricing } : {}),
        ...(options.spec.output ? { output: options.spec.output } : {}),
        framing: { configPath: options.spec.configPath, yiemVersion: options.yiemVersion },
        onEvent: (event) => {
          options.onEvent(event);
          if (event.type === "turnStart") onPartialResult(`turn ${event.turn}`);
          else if (event.type === "toolExecutionStart") onPartialResult(`turn ${event.turn}: calling ${event.toolName}`);
        },
      });
      return agentResult(run);
    },
  };
}

function agentResult(run: RunResult): ToolResult<AgentRunDetails> {
  const details: AgentRunDetails = {
    runId: run.runId,
    stopReason: run.stopReason,
    turns: run.turns,
    toolCalls: run.toolCalls,
    durationMs: run.durationMs,
    ...(run.error !== undefined ? { error: run.error } : {}),
  };
  const ok = run.stopReason === "completed" || run.stopReason === "terminated";
  const text = ok ? run.text : [`The agent run ended with stopReason "${run.stopReason}"${run.error ? `: ${run.error}` : ""}.`, run.text].filter(Boolean).join("\n\n");
  return { content: [{ type: "text", text }], details, usage: run.usage, ...(ok ? {} : { isError: true }) };
}
