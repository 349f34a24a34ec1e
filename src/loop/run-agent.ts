/**
 * The agent loop: messages → provider → tool calls → prepare/execute/finalize → tool results
 * (in call order) → next turn. It ends when the model answers without tool calls (`completed`),
 * after a batch in which a result set `terminate` (`terminated`), on a limit (`maxTurns`,
 * `timeout`, `budget` (tokens or cost, ./cost.ts), `loopDetected`, or `maxTokens`: an answer cut by
 * the model's token limit, whose text is still the run's text), with an output schema on an answer
 * that never validated (`outputInvalid`, ./structured-output.ts), on abort (`aborted`) or on a model failure (`error`).
 * Rules: `agentStart` comes first and `agentEnd` exactly once, last; every tool call id gets
 * exactly one result message; runAgent never throws.
 */
import { randomUuid } from "../random-id.js";
import type { AssistantMessage, ChatMessage, FinishReason, ModelResponse, ToolCall, ToolSpec } from "../provider/types.js";
import type { Emit } from "./events.js";
import { createRunFrame } from "./run-frame.js";
import type { FinishedCall } from "./execute.js";
import { messageOf } from "./prepare.js";
import { rejectCall, runToolCalls } from "./schedule.js";
import { stopOf } from "./abort.js";
import { openRunScope } from "./run-scope.js";
import { createRunState } from "./run-state.js";
import { capToolCalls, extractToolCalls } from "./tool-calls.js";
import { preloadValidator } from "../tools/validate.js";
import { previewArguments } from "../tools/arguments.js";
import { defaultToolRegistry } from "../tools/registry.js";
import { DEFAULT_LIMITS, type Limits, type RunAgentOptions, type RunResult, type StopReason } from "./types.js";
import { addUsage, zeroUsage } from "../tools/usage.js";
import { contentText } from "../tools/content.js";
import { costBudgetExceeded, pricedUsage, withCosts } from "./cost.js";
import { createStructuredOutput } from "./structured-output.js";

/**
 * How long the first request waits before the argument validator starts loading beside it: a
 * local or replayed model answers sooner (the wait includes loading the HTTP client, ~20 ms), and
 * its answer would then wait for ajv (~5 ms). A remote model takes hundreds of milliseconds.
 */
const PRELOAD_AFTER_MS = 50;

export async function runAgent(options: RunAgentOptions): Promise<RunResult> {
  const framing = options.framing ?? {};
  const started = framing.startedAt ?? performance.now();
  // The run's framing (run-frame.ts): a caller that must be able to end the run from outside
  // the loop (the CLI: signals, a stuck tool) opens the frame itself (and prices its events).
  const frame = options.frame ?? createRunFrame({ runId: options.runId ?? randomUuid(), sink: withCosts(options.onEvent, options.pricing), startedAt: started });
  const runId = frame.runId;
  const emit: Emit = frame.emit;
  const limits: Limits = { ...DEFAULT_LIMITS, ...options.limits };
  const mode = options.toolExecution ?? "sequential";
  // With an output schema: the final-answer tool joins this run's registry (./structured-output.ts).
  const output = options.output ? createStructuredOutput(options.output, options.registry ?? defaultToolRegistry, options.isToolAllowed ?? (() => true)) : undefined;
  const isToolAllowed = output?.isToolAllowed ?? options.isToolAllowed ?? (() => true);
  const registry = output?.registry ?? options.registry ?? defaultToolRegistry;
  const hooks = options.hooks ?? {};
  const messages: ChatMessage[] = [...options.messages];
  const usage = zeroUsage();
  let turns = 0;
  let toolCallCount = 0;

  // One signal for the whole run (run-scope.ts): the caller's abort or the run timeout; its
  // abort reason says how the run ends.
  const scope = options.scope ?? openRunScope({ signal: options.signal, timeoutMs: limits.runTimeoutMs });
  const signal = scope.signal;
  const interruptedReason = (): StopReason => stopOf(signal.reason).stopReason;
  const overCost = () => costBudgetExceeded(usage, options.pricing, limits.maxCostUsd);
  const budgetSpent = () => (limits.maxTokens > 0 && usage.totalTokens > limits.maxTokens) || overCost() !== null;
  const budgetError = () => overCost() ?? `token budget exceeded: ${usage.totalTokens} > ${limits.maxTokens}`;

  // Per-run state (run-state.ts): the run's offer under its policy, its ids, its repeat counts.
  const state = createRunState(runId, registry, isToolAllowed);
  const offeredTools = state.offeredTools;
  frame.start({
    yiemVersion: framing.yiemVersion ?? "0.0.0",
    model: options.provider.model,
    tools: offeredTools().map((t) => t.name),
    toolExecution: mode,
    configPath: framing.configPath ?? null,
    ...(framing.baseURL ? { baseURL: framing.baseURL } : {}),
    ...(framing.mcpServers ? { mcpServers: framing.mcpServers } : {}),
  });
  for (const warning of framing.startWarnings ?? []) emit({ type: "warning", ...warning });
  framing.onStart?.(emit);
  let warningsOpen = true;
  framing.attachWarnings?.((warning) => warningsOpen && emit({ type: "warning", ...warning }));

  let stopReason: StopReason = "completed";
  let finishReason: FinishReason | null = null;
  let text = "";
  let error: string | undefined;

  try {
    for (;;) {
      if (signal.aborted) {
        stopReason = interruptedReason();
        break;
      }
      if (budgetSpent()) {
        // Spent by tools since the last response: do not ask the model again.
        stopReason = "budget";
        error = budgetError();
        break;
      }
      if (turns >= limits.maxTurns) {
        stopReason = "maxTurns";
        error = `the run reached maxTurns (${limits.maxTurns}) without a final answer`;
        break;
      }
      const turn = ++turns;
      emit({ type: "turnStart", turn });
      const tools: ToolSpec[] = offeredTools().map((t) => ({ name: t.name, description: t.description, parameters: t.inputSchema }));

      let response: ModelResponse;
      let preload: NodeJS.Timeout | undefined;
      try {
        const pending = options.provider.complete({
          messages,
          tools,
          ...(output?.responseFormat ? { responseFormat: output.responseFormat } : {}),
          signal,
          onTextDelta: (delta) => emit({ type: "messageUpdate", turn, delta }),
          onRetry: (info) => emit({ type: "retry", ...info }),
          onSdkLog: (line) => emit({ type: "debug", kind: "sdk", ...line }),
        });
        // Tools are on offer: load the argument validator while the first request is in flight,
        // once it has waited PRELOAD_AFTER_MS (an answer that comes sooner would wait for ajv).
        if (turn === 1 && tools.length > 0) preload = setTimeout(preloadValidator, PRELOAD_AFTER_MS);
        response = await pending;
      } catch (err) {
        if (signal.aborted) stopReason = interruptedReason();
        else {
          stopReason = "error";
          error = output ? output.describeModelError(err) : messageOf(err);
        }
        emit({ type: "turnEnd", turn, toolResults: 0, usage: zeroUsage() });
        break;
      } finally {
        clearTimeout(preload);
      }

      finishReason = response.finishReason;
      const turnUsage = { ...response.usage };
      addUsage(usage, response.usage);
      const extracted = extractToolCalls(response.message, state.nextCallId);
      const capped = capToolCalls(extracted.toolCalls, limits.maxToolCallsPerResponse);
      const assistant: AssistantMessage = { role: "assistant", content: extracted.content, toolCalls: capped.calls };
      // Reasoning goes back to the server with the turn (only when it sent some; see provider/types.ts).
      if (response.message.reasoning) assistant.reasoning = response.message.reasoning;
      messages.push(assistant);
      emit({
        type: "messageEnd",
        turn,
        message: { role: "assistant", content: assistant.content, toolCalls: assistant.toolCalls },
        usage: response.usage,
        finishReason: response.finishReason,
      });

      const calls = capped.calls;
      toolCallCount += calls.length;
      const longestRepeat = state.countRepeats(calls);
      const batch = { turn, emit };
      let finished: FinishedCall[];
      let stopAfterBatch: StopReason | null = null;

      // A final answer is delivered even when it spent the budget; only further work is refused.
      if (calls.length > 0 && budgetSpent()) {
        finished = rejectAll(calls, `Not executed: the run's ${overCost() ? "cost" : "token"} budget is spent.`, batch);
        stopAfterBatch = "budget";
        error = budgetError();
      } else if (calls.length > 0 && response.finishReason === "length") {
        // The raw arguments stay in the result (the next request carries `{}` for cut ones: see provider/wire.ts).
        finished = calls.map((call) =>
          rejectCall(call, call.arguments, `Not executed: the response was cut by the length limit, so these arguments may be incomplete. Send the call again, shorter. Received arguments: ${previewArguments(call.arguments)}`, batch),
        );
      } else if (limits.loopDetection > 0 && longestRepeat.count >= limits.loopDetection) {
        finished = rejectAll(calls, `Not executed: the same call was made in ${longestRepeat.count} turns in a row.`, batch);
        stopAfterBatch = "loopDetected";
        error = `loop detected: "${longestRepeat.name}" called ${longestRepeat.count} times in a row (one call per turn) with the same arguments`;
      } else {
        finished = await runToolCalls(capped.over ? calls.slice(0, -1) : calls, {
          mode,
          maxConcurrency: limits.maxConcurrency,
          registry,
          isToolAllowed: state.isOffered,
          run: state,
          hooks,
          turn,
          signal,
          emit,
          toolTimeoutMs: limits.toolTimeoutMs,
        });
        if (capped.over) finished.push(...rejectAll([capped.over], capped.overReason, batch));
      }

      for (const done of finished) {
        messages.push({ role: "tool", toolCallId: done.toolCall.id, toolName: done.toolCall.name, content: done.result.content, isError: done.isError });
        if (done.result.usage) {
          addUsage(usage, done.result.usage);
          addUsage(turnUsage, done.result.usage);
        }
      }
      emit({ type: "turnEnd", turn, toolResults: finished.length, usage: turnUsage });

      const outputVerdict = output?.afterBatch(finished);
      if (outputVerdict?.kind === "fail" && !stopAfterBatch) {
        stopAfterBatch = "outputInvalid";
        error = outputVerdict.error;
        text = output!.lastInvalid;
      }
      if (stopAfterBatch) {
        stopReason = stopAfterBatch;
        break;
      }
      if (signal.aborted) {
        stopReason = interruptedReason();
        break;
      }
      const terminating = finished.filter((f) => f.result.terminate);
      if (terminating.length > 0) {
        stopReason = "terminated";
        text = output?.value !== undefined ? JSON.stringify(output.value) : terminating.map((f) => contentText(f.result.content, "omit")).join("\n");
        break;
      }
      if (calls.length === 0) {
        text = assistant.content;
        if (response.finishReason === "length") {
          stopReason = "maxTokens";
          error = "the answer was cut by the model's token limit (finish_reason length): raise model.maxTokens, or ask for a shorter answer";
        } else if (output) {
          // With an output schema the answer must validate (./structured-output.ts).
          const verdict = await output.onAnswer(assistant.content);
          if (verdict.kind === "retry") {
            messages.push(verdict.message);
            continue;
          }
          stopReason = verdict.kind === "accept" ? "completed" : "outputInvalid";
          if (verdict.kind === "accept") text = JSON.stringify(verdict.value);
          else {
            error = verdict.error;
            text = output.lastInvalid;
          }
        } else stopReason = "completed";
        break;
      }
    }
  } catch (err) {
    // Defensive: the loop's own code failed. Still end with exactly one agentEnd.
    stopReason = "error";
    error = `internal error: ${messageOf(err)}`;
  } finally {
    // A scope the caller opened is the caller's to dispose of.
    if (!options.scope) scope.dispose();
  }

  if ((stopReason === "aborted" || stopReason === "timeout" || stopReason === "error") && !error) {
    error = stopOf(signal.reason).message;
  }
  const durationMs = Math.round(performance.now() - started);
  warningsOpen = false;
  const structured = output ? { structured: output.value ?? null } : {};
  frame.end({ stopReason, turns, toolCalls: toolCallCount, usage: { ...usage }, durationMs, ...(error !== undefined ? { error } : {}), model: options.provider.model, finishReason, ...structured });
  return { runId, model: options.provider.model, text, stopReason, turns, toolCalls: toolCallCount, usage: pricedUsage({ ...usage }, options.pricing), durationMs, finishReason, messages, ...(error !== undefined ? { error } : {}), ...structured, ...(output ? { answered: output.answered } : {}) };
}

function rejectAll(calls: ToolCall[], reason: string, ctx: { turn: number; emit: Emit }): FinishedCall[] {
  return calls.map((call) => rejectCall(call, call.arguments, reason, ctx));
}

