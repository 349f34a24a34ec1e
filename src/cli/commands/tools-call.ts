/**
 * `yiem tools call <name> [--args JSON|@file|-]`: prepare, validate and execute one tool without a
 * model (no hooks; the policy neither blocks the call nor is skipped by `listTools`, which lists
 * only the tools the spec allows). Events on stderr per `--events`, framed like a run's:
 * `agentStart` (model "none", tools [name]) → any `warning`s → `toolCallRejected`, or
 * toolExecutionStart/Update/End → `agentEnd` (stopReason completed, terminated, error or aborted;
 * turns 0, toolCalls 1, the tool's usage); a problem before that (bad spec, unreadable --args) is
 * a lone `agentEnd`, as for `run`. The result on stdout: its text, or with `--output json` one line
 * `{content, details, isError}`. Secrets are redacted as in `run` (events, stdout, messages).
 * Exit 0 ok, 1 error result, 2 unknown tool, invalid arguments or bad spec, 128+signal when interrupted (130 SIGINT, 143 SIGTERM, 129 SIGHUP, 131 SIGQUIT).
 */
import { randomHex, randomUuid } from "../../random-id.js";
import { addSecretEnvNames, secretValues } from "../../secrets.js";
import type { Emit } from "../../loop/events.js";
import { createRunFrame } from "../../loop/run-frame.js";
import type { RunFrame } from "../../loop/types.js";
import { executeToolCall, type FinishedCall } from "../../loop/execute.js";
import { prepareArguments } from "../../loop/prepare.js";
import { createRedactor, type Redactor } from "../../redact.js";
import type { AgentEventBody, StopReason } from "../../loop/types.js";
import { addUsage, zeroUsage } from "../../tools/usage.js";
import type { ContentPart } from "../../tools/types.js";
import { reportUsageError } from "../errors.js";
import { createCallSink, type CliEventSink, type EventsMode } from "../events/sink.js";
import type { CliIo } from "../io.js";
import { EXIT, exitCodeFor, exitCodeForError } from "../exit-codes.js";
import { packageVersion } from "../../package-info.js";
import { printJson, printText } from "../output.js";
import { guardChannels } from "../../channels/guard.js";
import { messageOf } from "../../error-text.js";
import { McpRequiredError } from "../../mcp/required-error.js";
import { installSignalHandlers } from "../signals.js";
import { loadToolsRegistry, loadToolsSpec, unknownTool, warnProblems } from "./tools-context.js";
import { readFlagValue } from "../flag-value.js";
import { contentText } from "../../tools/content.js";

export async function callCommand(argv: Record<string, unknown>, io: CliIo): Promise<number> {
  const sink = createCallSink(io, argv.events as EventsMode | undefined);
  const mode = (argv.events as EventsMode | undefined) ?? (io.isTTY.stderr ? "pretty" : "ndjson");
  const runId = randomUuid();
  // Until the spec names the API key, hide what the environment's secret-named variables hold.
  let redact: Redactor = createRedactor(secretValues(io.env));
  const frame = createRunFrame({ runId, sink: (event) => sink.emit(redact(event)) });
  const emit: Emit = frame.emit;
  let started = false;
  let closeMcp: () => Promise<void> = () => Promise.resolve();
  // Tool code's output becomes warning events (held until agentStart, none after agentEnd); a
  // throw or rejection nobody handled fails the call (../../channels/guard.ts).
  const held: string[] = [];
  let warn = (message: string): unknown => held.push(message);
  let uncaught: unknown;
  let hasUncaught = false;
  guardChannels({
    onOutput: ({ stream, text }) => warn(`tool or hook code wrote to ${stream}: ${text}`),
    onUncaught: (error) => {
      if (!hasUncaught) uncaught = error;
      hasUncaught = true;
    },
  });
  try {
    const name = String(argv.name ?? "");
    const raw = argv.args === undefined ? "{}" : await readFlagValue("args", String(argv.args), io, { allowStdin: true });
    const spec = await loadToolsSpec(argv, io);
    redact = createRedactor(secretValues(io.env, [spec.model.apiKey]));
    const processes = await import("../../tools/process.js");
    addSecretEnvNames(spec.model.apiKeyEnv);
    const { registry, problems, mcp } = await loadToolsRegistry(spec, io, { mcp: name.startsWith("mcp__") });
    closeMcp = () => mcp?.close() ?? Promise.resolve();
    const { createToolPolicy } = await import("../../tools/policy.js");
    // listTools lists what the spec allows: the call's run view (not a policy put on the registry).
    const allowed = createToolPolicy(spec.tools.allow, spec.tools.deny);
    const run = { isOffered: allowed, offeredTools: () => registry.list().filter((t) => allowed(t.name)) };
    const clock = performance.now();
    const tool = registry.get(name);
    frame.start({
      yiemVersion: packageVersion(),
      model: "none",
      tools: tool ? [name] : [],
      toolExecution: spec.toolExecution,
      configPath: spec.configPath ?? null,
    });
    started = true;
    warnProblems(emit, problems);
    for (const event of mcp?.startEvents ?? []) emit(event);
    mcp?.attach(emit);
    warn = (message) => emit({ type: "warning", message });
    for (const message of held.splice(0)) warn(message);
    const end = (stopReason: StopReason, finished: FinishedCall | null, error?: string) => {
      warn = () => 0;
      const usage = zeroUsage();
      addUsage(usage, finished?.result.usage);
      frame.end({ stopReason, turns: 0, toolCalls: 1, usage, durationMs: Math.round(performance.now() - clock), ...(error !== undefined ? { error } : {}) });
    };
    const toolCall = { id: `call_${randomHex(6)}`, name, arguments: raw };
    const reject = async (reason: string, args: unknown) => {
      emit({ type: "toolCallRejected", turn: 1, toolCallId: toolCall.id, toolName: name, args, reason });
      end("error", null, reason);
      await sink.close();
      if (mode === "none") reportUsageError(io, redact(reason));
      return EXIT.usage;
    };
    if (!tool) return await reject(unknownTool(name, registry.list().map((t) => t.name), problems.length).message, raw);
    const prepared = await prepareArguments(tool, raw);
    if (!prepared.ok) return await reject(prepared.reason, prepared.args);

    const signals = installSignalHandlers(io);
    signals.beforeForcedExit(() => processes.killAllChildren());
    // Handlers stay installed until exit, so a signal during the flush still exits 128+signal.
    const finished = await executeToolCall(
      { toolCall, tool, args: prepared.args },
      { turn: 1, signal: signals.controller.signal, hooks: {}, emit, toolTimeoutMs: spec.limits.toolTimeoutMs, run },
    );
    const { result, isError } = finished;
    const escaped = hasUncaught ? `tool or hook code failed outside its call: ${messageOf(uncaught)}` : undefined;
    const stopReason: StopReason = signals.received ? "aborted" : isError || escaped ? "error" : result.terminate ? "terminated" : "completed";
    end(stopReason, finished, escaped ?? (stopReason === "error" || stopReason === "aborted" ? contentText(result.content) : undefined));
    await sink.close();
    if (argv.output === "json") {
      await printJson(redact({ content: result.content, details: result.details ?? null, isError }), io.stdout, { indent: 0 });
    } else {
      await printText(redact(contentText(result.content)), io.stdout);
    }
    return exitCodeFor(stopReason, signals.received);
  } catch (error) {
    return await reportFailure(error, { io, sink, mode, frame, started, redact, debug: Boolean(argv.debug) });
  } finally {
    await closeMcp().catch(() => {});
    await sink.close();
  }
}

/** A problem outside the tool (spec, flags, loading): one agentEnd event, or a line with `--events none`. */
async function reportFailure(
  error: unknown,
  ctx: { io: CliIo; sink: CliEventSink; mode: EventsMode; frame: RunFrame; started: boolean; redact: Redactor; debug: boolean },
): Promise<number> {
  const message = ctx.redact(messageOf(error));
  if (ctx.mode === "none") reportUsageError(ctx.io, message);
  else {
    // A required MCP server that failed: its own report first, as in a run.
    for (const event of error instanceof McpRequiredError ? error.events : []) ctx.frame.emit(event);
  }
  if (ctx.mode !== "none") ctx.frame.end({ stopReason: "error", turns: 0, toolCalls: ctx.started ? 1 : 0, usage: zeroUsage(), durationMs: 0, error: message });
  if (ctx.debug && error instanceof Error && error.stack) ctx.sink.log(ctx.redact(error.stack));
  await ctx.sink.close();
  return exitCodeForError(error);
}

