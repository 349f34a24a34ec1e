/**
 * The loop contract: options, hooks, events and the run result.
 * Event names and fields are the public NDJSON contract (CONTRACT §5); change them only with
 * `schema/events.schema.json`.
 */
import type { HttpExchange } from "../provider/http-trace.js";
import type { SdkLogLine } from "../provider/sdk-log.js";
import type { ChatMessage, FinishReason, Provider, ToolCall } from "../provider/types.js";
import type { ContentPart, JsonSchema, McpOrigin, Tool, ToolResult, Usage } from "../tools/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { RunScope } from "./run-scope.js";
import type { BatchEndBody, BatchProgressBody, BatchStartBody } from "./batch-event-bodies.js";

export type ToolExecutionMode = "sequential" | "parallel";

export type StopReason =
  | "completed"
  | "terminated"
  | "maxTurns"
  | "timeout"
  | "budget"
  | "loopDetected"
  /** The final answer was cut by the model's token limit (`finish_reason: length`); its text is still the run's text. */
  | "maxTokens"
  /** A final answer was asked for against a schema and none validated after the retries (./structured-output.ts). */
  | "outputInvalid"
  | "aborted"
  | "error";

export interface Limits {
  /** Model turns at most (default 25). */
  maxTurns: number;
  /** Per tool call, ms; 0 = none (default 120000). A tool's own `timeoutMs` wins. */
  toolTimeoutMs: number;
  /** Whole run, ms; 0 = none. */
  runTimeoutMs: number;
  /** Parallel mode: calls running at once at most (default 8). */
  maxConcurrency: number;
  /** Cumulative totalTokens budget, checked after each model response; 0 = none. */
  maxTokens: number;
  /** Cost budget in USD, checked like maxTokens; 0 = none; needs `pricing` (./cost.ts). */
  maxCostUsd: number;
  /**
   * A call (same tool, same arguments) made in this many turns in a row stops the run; repeats
   * within one response do not count; 0 = off (default 5).
   */
  loopDetection: number;
  /**
   * Tool calls run per model response at most (default 128): the next one is rejected with a
   * message the model can act on, and any after it are dropped from the conversation.
   */
  maxToolCallsPerResponse: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxTurns: 25,
  toolTimeoutMs: 120_000,
  runTimeoutMs: 0,
  maxConcurrency: 8,
  maxTokens: 0,
  maxCostUsd: 0,
  loopDetection: 5,
  maxToolCallsPerResponse: 128,
};

export interface BeforeToolCallContext {
  turn: number;
  toolCall: ToolCall;
  tool: Tool;
  /** Arguments after preparation and validation. */
  args: Record<string, unknown>;
  signal: AbortSignal;
}

/** Return `{block: true, reason}` to reject the call (the model sees the reason), or `{args}` to replace them. */
export type BeforeToolCallResult = { block?: boolean; reason?: string; args?: Record<string, unknown> } | void | undefined;

export interface AfterToolCallContext extends BeforeToolCallContext {
  result: ToolResult;
  isError: boolean;
}

/**
 * Any field returned replaces the one in the result; `usage` replaces the tokens the call
 * reports (added to the run's usage).
 */
export type AfterToolCallResult =
  | { content?: ContentPart[]; details?: unknown; isError?: boolean; terminate?: boolean; usage?: Partial<Usage> }
  | void
  | undefined;

/**
 * Hooks. Rules: both receive the run's abort signal; a hook that throws blocks the call
 * (before) or turns the result into an error (after: its content becomes the failure message,
 * details are dropped, the tool's `usage` and `terminate` are kept); it never crashes the run.
 */
export interface AgentHooks {
  beforeToolCall?(ctx: BeforeToolCallContext): BeforeToolCallResult | Promise<BeforeToolCallResult>;
  afterToolCall?(ctx: AfterToolCallContext): AfterToolCallResult | Promise<AfterToolCallResult>;
}

export interface RunAgentOptions {
  provider: Provider;
  /**
   * Read at the start of every turn, so tools added during a run are offered from the next turn.
   * Default: `defaultToolRegistry` (what `registerTool(tool)` adds to).
   */
  registry?: ToolRegistry;
  /** The conversation so far: system prompt, user prompt(s), earlier turns. Not mutated. */
  messages: ChatMessage[];
  toolExecution?: ToolExecutionMode;
  limits?: Partial<Limits>;
  hooks?: AgentHooks;
  /**
   * Tools the policy allows; a call to any other is rejected, and it is never offered nor listed
   * by `listTools`. The policy is the run's own (./run-state.ts): other runs on the same registry
   * keep theirs. Default: all.
   */
  isToolAllowed?: (name: string) => boolean;
  /** Aborts the run (with a RunStop reason, see abort.ts, it ends the way the reason says). */
  signal?: AbortSignal;
  /**
   * The run's scope (./run-scope.ts), when the caller opened it, e.g. so the deadline also covers
   * its own preparation (the CLI: stdin, tool loading). It then replaces `signal` and
   * `limits.runTimeoutMs`, and stays the caller's to dispose of. Default: a scope over those two.
   */
  scope?: RunScope;
  /** Receives every event, in order. Must not throw. */
  onEvent?: EventSink;
  runId?: string;
  /**
   * The run's frame (./run-frame.ts), when the caller opened it, e.g. to be able to end the run
   * from outside the loop (`close()`); it then owns runId and the sink (`runId` and `onEvent`
   * are not used). Default: a frame over `runId` and `onEvent`.
   */
  frame?: RunFrame;
  /** What a command-line caller adds to the run's framing (agentStart fields, events from outside the loop). */
  framing?: RunFraming;
  /**
   * USD per million tokens: every usage object in events and the result gets `costUsd` (./cost.ts).
   * A caller that passes its own `frame` prices that frame's events itself (`pricedEvent`).
   */
  pricing?: Pricing;
  /** The final answer as a JSON value valid against a schema (./structured-output.ts). */
  output?: OutputContract;
}

/**
 * The caller's part of a run's framing, for callers that set things up before the loop (the
 * CLI: its spec, its tool files, MCP servers, stdin); a library caller needs none of it.
 */
export interface RunFraming {
  /** Emitted as `warning` events right after `agentStart` (e.g. tool files that failed to load). */
  startWarnings?: Array<{ message: string; path?: string; code?: WarningCode }>;
  /**
   * When the run began for its caller, as a `performance.now()` time (e.g. before the CLI read
   * stdin); `durationMs` counts from it. Default: when runAgent is called.
   */
  startedAt?: number;
  /** Called after the start warnings with a function that emits one more `warning` event until agentEnd (then it does nothing). */
  attachWarnings?: (warn: (warning: { message: string; path?: string }) => void) => void;
  /** agentStart's `configPath` (default null). */
  configPath?: string | null;
  /** agentStart's `baseURL`: the model server, without credentials or query (absent for the replay model). */
  baseURL?: string;
  /** agentStart's `yiemVersion` (default "0.0.0"). */
  yiemVersion?: string;
  /** MCP servers and their status, listed in agentStart when given. */
  mcpServers?: McpServerStatus[];
  /**
   * Called right after agentStart and the start warnings with the run's emitter, so events from
   * outside the loop (MCP servers: ready, errors, tool list changes) join the run's sequence.
   */
  onStart?: (emit: (body: AgentEventBody) => void) => void;
}

/** An MCP server as agentStart lists it. */
export interface McpServerStatus {
  name: string;
  transport: "stdio" | "http";
  status: "ready" | "failed";
  required: boolean;
  /** Tools offered from it (yiem names). */
  tools: string[];
}

export interface RunResult {
  runId: string;
  /** The provider's model name, as agentStart reports it; absent for a run that ended before the loop. */
  model?: string;
  /** The final assistant text ("" when the run ended otherwise). */
  text: string;
  stopReason: StopReason;
  turns: number;
  toolCalls: number;
  usage: Usage;
  durationMs: number;
  /** The `finish_reason` of the last model response; null when the run got none. */
  finishReason: FinishReason | null;
  /** The whole conversation, including the initial messages. */
  messages: ChatMessage[];
  error?: string;
  /**
   * With `output`: the final answer's value (valid against the schema), or null when the run
   * ended without one (then `text` holds the last invalid answer, if any). Absent without `output`.
   */
  structured?: unknown;
  /** With `output`: whether an answer validated, so a `structured` of null is that answer (a schema may allow null). Absent without `output`. */
  answered?: boolean;
}

// ---- events ----

export interface EventBase {
  runId: string;
  /** 1, 2, 3 … within a run. */
  seq: number;
  /** ISO-8601. */
  ts: string;
  /** `yiem batch --events ndjson`: the input item this run is. */
  itemId?: string;
}

export interface ToolCallView {
  id: string;
  name: string;
  arguments: string;
}

export type AgentEventBody =
  | {
      type: "agentStart";
      schemaVersion: 1;
      yiemVersion: string;
      model: string;
      tools: string[];
      toolExecution: ToolExecutionMode;
      configPath: string | null;
      /** The model server's base URL (no credentials, no query), when the model is one. */
      baseURL?: string;
      mcpServers?: McpServerStatus[];
      /** The stored session of the run (added by the CLI, docs/sessions.md). */
      sessionId?: string;
      /** `yiem mcp serve`: how the session is served (docs/mcp.md, "Serving"). */
      serve?: { transport: "stdio" | "http"; url?: string; agentTool?: string };
    }
  | { type: "turnStart"; turn: number }
  | { type: "messageUpdate"; turn: number; delta: string }
  | {
      type: "messageEnd";
      turn: number;
      message: { role: "assistant"; content: string; toolCalls: ToolCallView[] };
      usage: Usage;
      finishReason: FinishReason;
    }
  | { type: "toolCallRejected"; turn: number; toolCallId: string; toolName: string; args: unknown; reason: string }
  | { type: "toolExecutionStart"; turn: number; toolCallId: string; toolName: string; args: unknown; mcp?: McpOrigin }
  | {
      type: "toolExecutionUpdate";
      turn: number;
      toolCallId: string;
      toolName: string;
      partialResult: { content: ContentPart[]; details?: unknown };
      mcp?: McpOrigin;
    }
  | {
      type: "toolExecutionEnd";
      turn: number;
      toolCallId: string;
      toolName: string;
      result: { content: ContentPart[]; details?: unknown };
      isError: boolean;
      durationMs: number;
      mcp?: McpOrigin;
    }
  | { type: "retry"; attempt: number; delayMs: number; status: number | null; message: string }
  | { type: "turnEnd"; turn: number; toolResults: number; usage: Usage }
  | { type: "warning"; message: string; path?: string; code?: WarningCode }
  /** `--debug` / `YIEM_DEBUG=http`: one HTTP exchange with the model server (../provider/http-trace.ts). */
  | ({ type: "debug"; kind: "http" } & HttpExchange)
  /**
   * One log line of the openai package (`OPENAI_LOG`, default level `warn`; ../provider/sdk-log.ts).
   * Every level is a `debug` event, never a `warning`: the package's words, not yiem's.
   */
  | { type: "debug"; kind: "sdk"; level: SdkLogLine["level"]; message: string }
  | {
      type: "mcpServerReady";
      server: string;
      transport: "stdio" | "http";
      protocolVersion: string;
      serverInfo: { name: string; version: string; title?: string };
      /** Tools offered from it (yiem names). */
      tools: string[];
      durationMs: number;
    }
  | {
      type: "mcpServerError";
      server: string;
      /** spawn, connect, handshake, listTools (start), or runtime (after it was ready). */
      phase: "spawn" | "connect" | "handshake" | "listTools" | "runtime";
      required: boolean;
      message: string;
      /** The last lines of a stdio server's stderr ("" when none). */
      stderrTail: string;
    }
  | { type: "mcpToolsChanged"; server: string; added: string[]; removed: string[] }
  | {
      type: "agentEnd";
      stopReason: StopReason;
      turns: number;
      toolCalls: number;
      usage: Usage;
      durationMs: number;
      error?: string;
      /** As in agentStart. */
      sessionId?: string;
      /** As in agentStart. */
      model?: string;
      /** The last model response's `finish_reason`; null when the run got none. */
      finishReason?: FinishReason | null;
      /** The run's cost in USD, when the spec prices the model (usage.costUsd). */
      costUsd?: number;
      /** With an output schema: the valid final value, or null when there is none. */
      structured?: unknown;
    }
  | BatchStartBody
  | BatchProgressBody
  | BatchEndBody;

/**
 * A machine-readable name for a `warning`, for the ones a script may want to act on:
 * `stdinIgnored`: piped stdin sent nothing within the grace and the run went on without it.
 */
export type WarningCode = "stdinIgnored";

export type AgentEvent = AgentEventBody & EventBase;
export type AgentEventType = AgentEvent["type"];
export type EventSink = (event: AgentEvent) => void;

// ---- the run frame (implemented by ./run-frame.ts) ----

type AgentStartBody = Extract<AgentEventBody, { type: "agentStart" }>;
type AgentEndBody = Extract<AgentEventBody, { type: "agentEnd" }>;

/** How a run ended, as its `agentEnd` says. */
export type RunOutcome = Omit<AgentEndBody, "type">;

/** What `end()` is told; counts and duration left out are the frame's own (module rules). */
export type RunEnding = Pick<AgentEndBody, "stopReason"> & Partial<Omit<AgentEndBody, "type" | "stopReason">>;

export interface RunFrame {
  readonly runId: string;
  /** Stamps `body` and passes it to the sink; does nothing once the run has ended. An `agentEnd` body goes through `end()`. */
  emit(body: AgentEventBody): void;
  /** Emits `agentStart` (schemaVersion 1). */
  start(fields: Omit<AgentStartBody, "type" | "schemaVersion">): void;
  /** Emits the one `agentEnd` (module rules); returns the outcome it carries. */
  end(ending: RunEnding): RunOutcome;
  /** Closes the open turn and its calls, then ends the run (module rules); does nothing once ended. */
  close(stopReason: StopReason, error: string): RunOutcome;
  /**
   * Passes on an event already stamped for this run (e.g. read back from a recording): its `seq`
   * is adopted, so the frame's own events continue after it.
   */
  relay(event: AgentEvent): void;
  /** True once `agentEnd` was emitted. */
  readonly ended: boolean;
  /** The outcome `agentEnd` carried; null before the run ended. */
  readonly outcome: RunOutcome | null;
}


/** USD per million tokens, as the user states them (./cost.ts prices with it). */
export interface Pricing {
  inputPerMTok: number;
  outputPerMTok: number;
  /** Prompt tokens the server served from its cache; default `inputPerMTok`. */
  cachedInputPerMTok?: number;
}

/** How a schema is enforced (./structured-output.ts): a final-answer tool, or the server's response_format. */
export type OutputMode = "tool" | "native";

/** The final answer as a JSON value valid against `schema` (./structured-output.ts). */
export interface OutputContract {
  /** A JSON Schema (draft-07, as tool schemas); checked when the spec loads. */
  schema: JsonSchema;
  /** Default `tool`. */
  mode?: OutputMode;
  /** Invalid answers sent back to the model before the run ends `outputInvalid` (default 2). */
  retries?: number;
}
