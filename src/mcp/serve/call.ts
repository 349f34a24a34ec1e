/**
 * One served `tools/call`, through the loop's own pipeline: `runToolCalls` with the one call
 * (prepare → execute → finalize: the registry and policy lookup, prepareArguments, ajv with
 * defaults and coercion, validateRequiredArgs, beforeToolCall, execute under the tool timeout,
 * afterToolCall). Rules:
 * - a rejection (unknown or denied tool, invalid arguments, a hook's block) and an error result
 *   (a throw, a timeout, an abort) come back as `isError: true` with the text the model would get:
 *   never a protocol error;
 * - text and image parts map to MCP content one to one; `details` (and a tool's `usage`) go to
 *   `_meta`, never to `structuredContent`;
 * - every `onPartialResult` becomes a `notifications/progress` when the client sent a progress
 *   token (`progress` counts 1, 2, 3 …; `message` is the partial text);
 * - the call's signal is the client's (notifications/cancelled, a closed HTTP stream, stdin's end)
 *   joined with the server's (a signal): an abort reaches execute, and command tools end their
 *   process groups;
 * - a tool with `parallelToolExecute: false` runs alone: it waits for the calls in flight and the
 *   next calls wait for it (as in a parallel turn of `run`).
 */
import type { Emit } from "../../loop/events.js";
import type { FinishedCall } from "../../loop/execute.js";
import { runToolCalls } from "../../loop/schedule.js";
import type { AgentHooks } from "../../loop/types.js";
import type { ToolRegistry } from "../../tools/registry.js";
import type { ContentPart } from "../../tools/types.js";

/** An MCP content block yiem produces. */
export type McpContent = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

/** A `tools/call` result as the SDK sends it. */
export interface McpCallResult {
  content: McpContent[];
  isError?: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** What one call gets from the protocol side. */
export interface CallChannel {
  signal: AbortSignal;
  /** Set when the client sent a progress token. */
  progress?: (progress: number, message: string) => void;
}

export interface ServedCallContext {
  registry: ToolRegistry;
  isToolAllowed: (name: string) => boolean;
  hooks: AgentHooks;
  toolTimeoutMs: number;
  /** The session's emitter (events of every served call). */
  emit: Emit;
  /** The server's own signal (SIGTERM, SIGINT, shutdown). */
  signal: AbortSignal;
  /** The number of this call in the session: its events' `turn`, and its id (`call_<idPrefix>_<number>`). */
  nextCallNumber(): number;
  /** The start of every call id of the session. */
  idPrefix: string;
}

/** Runs one served call and maps its result. Never throws. */
export async function serveToolCall(name: string, args: unknown, channel: CallChannel, ctx: ServedCallContext, gate: CallGate): Promise<{ result: McpCallResult; finished: FinishedCall }> {
  const exclusive = ctx.registry.get(name)?.parallelToolExecute === false;
  const release = await gate.enter(exclusive);
  const { signal, unlink } = eitherSignal(channel.signal, ctx.signal);
  try {
    const number = ctx.nextCallNumber();
    const toolCall = { id: `call_${ctx.idPrefix}_${number}`, name, arguments: JSON.stringify(args ?? {}) };
    let progressCount = 0;
    const emit: Emit = (body) => {
      ctx.emit(body);
      if (body.type === "toolExecutionUpdate" && channel.progress) channel.progress(++progressCount, contentText(body.partialResult.content));
    };
    const [finished] = await runToolCalls([toolCall], {
      mode: "sequential",
      maxConcurrency: 1,
      registry: ctx.registry,
      isToolAllowed: ctx.isToolAllowed,
      hooks: ctx.hooks,
      turn: number,
      signal,
      emit,
      toolTimeoutMs: ctx.toolTimeoutMs,
    });
    return { result: toMcpResult(finished), finished };
  } finally {
    unlink();
    release();
  }
}

/** A signal that aborts when either does (AbortSignal.any is slow in Node 20); `unlink` drops the listeners. */
function eitherSignal(a: AbortSignal, b: AbortSignal): { signal: AbortSignal; unlink(): void } {
  if (a.aborted) return { signal: a, unlink: () => {} };
  if (b.aborted) return { signal: b, unlink: () => {} };
  const controller = new AbortController();
  const onA = () => controller.abort(a.reason);
  const onB = () => controller.abort(b.reason);
  a.addEventListener("abort", onA, { once: true });
  b.addEventListener("abort", onB, { once: true });
  return {
    signal: controller.signal,
    unlink() {
      a.removeEventListener("abort", onA);
      b.removeEventListener("abort", onB);
    },
  };
}

/** A finished call as an MCP result (rules above). */
export function toMcpResult(finished: FinishedCall): McpCallResult {
  const { result, isError } = finished;
  const meta: Record<string, unknown> = {};
  if (result.details !== undefined) meta.details = result.details;
  if (result.usage !== undefined) meta.usage = result.usage;
  return {
    content: toMcpContent(result.content),
    ...(isError ? { isError: true } : {}),
    ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}),
  };
}

export function toMcpContent(content: ContentPart[]): McpContent[] {
  const blocks = content.map((part): McpContent => (part.type === "text" ? { type: "text", text: part.text } : { type: "image", data: part.data, mimeType: part.mimeType }));
  return blocks.length > 0 ? blocks : [{ type: "text", text: "" }];
}

/** Text parts joined by newlines (images left out). */
export function contentText(content: ContentPart[]): string {
  return content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
}

/** Lets calls run together, except exclusive ones (`parallelToolExecute: false`), which run alone. */
export class CallGate {
  private running = 0;
  private exclusiveRunning = false;
  private readonly waiting: Array<{ exclusive: boolean; go: () => void }> = [];

  async enter(exclusive: boolean): Promise<() => void> {
    if (!this.canStart(exclusive) || this.waiting.length > 0) {
      await new Promise<void>((go) => this.waiting.push({ exclusive, go }));
    } else this.start(exclusive);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      if (exclusive) this.exclusiveRunning = false;
      this.wake();
    };
  }

  private canStart(exclusive: boolean): boolean {
    return !this.exclusiveRunning && (!exclusive || this.running === 0);
  }

  private start(exclusive: boolean): void {
    this.running++;
    if (exclusive) this.exclusiveRunning = true;
  }

  private wake(): void {
    while (this.waiting.length > 0 && this.canStart(this.waiting[0].exclusive)) {
      const next = this.waiting.shift()!;
      this.start(next.exclusive);
      next.go();
    }
  }
}
