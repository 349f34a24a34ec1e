/**
 * Preparing one tool call: find the tool → policy → parse arguments → prepareArguments →
 * JSON Schema validation → validateRequiredArgs → beforeToolCall. The first failure rejects
 * the call: it never executes, and its reason goes back to the model as an error result.
 * A model-written tool (`ToolSource.generated`) is the exception: its prepareArguments and
 * validateRequiredArgs are model-written code too, so beforeToolCall comes first, right after
 * parsing, and sees the arguments as the model sent them (args it returns are then prepared and
 * validated); a hook that blocks means no code of that tool ran.
 */
import type { ToolCall } from "../provider/types.js";
import { parseToolArguments, previewArguments, isPlainObject } from "../tools/arguments.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { Tool } from "../tools/types.js";
import { validateAgainstSchema } from "../tools/validate.js";
import { messageOf } from "../error-text.js";
import { untilAborted } from "./abort.js";
import type { AgentHooks } from "./types.js";

export type PreparedCall =
  | { kind: "prepared"; toolCall: ToolCall; tool: Tool; args: Record<string, unknown> }
  | { kind: "rejected"; toolCall: ToolCall; args: unknown; reason: string };

export interface PrepareContext {
  registry: ToolRegistry;
  isToolAllowed: (name: string) => boolean;
  hooks: AgentHooks;
  turn: number;
  signal: AbortSignal;
}

/** Runs the checks shared by the loop and `yiem tools call` (no hook, no policy). */
export async function prepareArguments(
  tool: Tool,
  rawArguments: unknown,
): Promise<{ ok: true; args: Record<string, unknown> } | { ok: false; args: unknown; reason: string }> {
  const parsed = parseToolArguments(rawArguments);
  const received = () => `Received arguments: ${previewArguments(rawArguments)}`;
  if (!parsed.ok) return { ok: false, args: rawArguments, reason: `Invalid arguments for tool "${tool.name}": ${parsed.error}. ${received()}` };
  let args: unknown = parsed.value;
  if (tool.prepareArguments) {
    try {
      args = await tool.prepareArguments(args);
    } catch (error) {
      return { ok: false, args, reason: `prepareArguments of tool "${tool.name}" failed: ${messageOf(error)}. ${received()}` };
    }
    if (!isPlainObject(args)) {
      return { ok: false, args, reason: `prepareArguments of tool "${tool.name}" must return an object. ${received()}` };
    }
  }
  const argsObject = args as Record<string, unknown>;
  let failures: string[];
  try {
    failures = await validateAgainstSchema(tool.inputSchema, argsObject);
  } catch (error) {
    return { ok: false, args, reason: `Tool "${tool.name}" has an invalid inputSchema: ${messageOf(error)}` };
  }
  if (failures.length > 0) {
    const lines = failures.map((f) => `- ${f}`).join("\n");
    return { ok: false, args, reason: `Invalid arguments for tool "${tool.name}":\n${lines}\n${received()}` };
  }
  if (tool.validateRequiredArgs) {
    let message: string | undefined | void;
    try {
      message = await tool.validateRequiredArgs(argsObject);
    } catch (error) {
      message = messageOf(error);
    }
    if (typeof message === "string" && message !== "") {
      return { ok: false, args, reason: `Invalid arguments for tool "${tool.name}": ${message.replace(/\.\s*$/, "")}. ${received()}` };
    }
  }
  return { ok: true, args: argsObject };
}

/** Prepares one call; an abort while a tool's or hook's code is still running rejects the call at once. */
export function prepareToolCall(toolCall: ToolCall, ctx: PrepareContext): Promise<PreparedCall> {
  const aborted = (): PreparedCall => ({
    kind: "rejected",
    toolCall,
    args: toolCall.arguments,
    reason: "Not executed: the run was aborted before this call was prepared.",
  });
  if (ctx.signal.aborted) return Promise.resolve(aborted());
  return untilAborted(prepareUnguarded(toolCall, ctx), ctx.signal, aborted);
}

async function prepareUnguarded(toolCall: ToolCall, ctx: PrepareContext): Promise<PreparedCall> {
  const reject = (reason: string, args: unknown = toolCall.arguments): PreparedCall => ({ kind: "rejected", toolCall, args, reason });
  const tool = ctx.registry.get(toolCall.name);
  if (!tool || !ctx.isToolAllowed(toolCall.name)) {
    const offered = ctx.registry.list().map((t) => t.name).filter(ctx.isToolAllowed);
    // A tool the policy removed answers exactly as a name that does not exist: nothing confirms it.
    return reject(`Unknown tool "${toolCall.name}". Available tools: ${offered.join(", ") || "(none)"}.`);
  }
  const hook = ctx.hooks.beforeToolCall;
  if (hook && ctx.registry.entry(toolCall.name)?.source.generated) {
    const parsed = parseToolArguments(toolCall.arguments);
    if (!parsed.ok) return reject(`Invalid arguments for tool "${tool.name}": ${parsed.error}. Received arguments: ${previewArguments(toolCall.arguments)}`);
    let raw: unknown = parsed.value;
    try {
      const decision = await hook({ turn: ctx.turn, toolCall, tool, args: parsed.value, signal: ctx.signal });
      if (decision?.block) return reject(`Tool call blocked: ${decision.reason || "blocked by the beforeToolCall hook"}`, parsed.value);
      if (decision?.args !== undefined) {
        if (!isPlainObject(decision.args)) return reject("beforeToolCall hook returned args that are not an object", parsed.value);
        raw = decision.args;
      }
    } catch (error) {
      return reject(`Tool call blocked: the beforeToolCall hook failed: ${messageOf(error)}`, parsed.value);
    }
    const checked = await prepareArguments(tool, raw);
    return checked.ok ? { kind: "prepared", toolCall, tool, args: checked.args } : reject(checked.reason, checked.args);
  }
  const prepared = await prepareArguments(tool, toolCall.arguments);
  if (!prepared.ok) return reject(prepared.reason, prepared.args);
  let args = prepared.args;
  if (ctx.hooks.beforeToolCall) {
    try {
      const decision = await ctx.hooks.beforeToolCall({ turn: ctx.turn, toolCall, tool, args, signal: ctx.signal });
      if (decision?.block) {
        return reject(`Tool call blocked: ${decision.reason || "blocked by the beforeToolCall hook"}`, args);
      }
      if (decision?.args !== undefined) {
        if (!isPlainObject(decision.args)) return reject("beforeToolCall hook returned args that are not an object", args);
        args = decision.args;
      }
    } catch (error) {
      return reject(`Tool call blocked: the beforeToolCall hook failed: ${messageOf(error)}`, args);
    }
  }
  return { kind: "prepared", toolCall, tool, args };
}

export { messageOf };
