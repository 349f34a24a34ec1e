/**
 * `yiem run [prompt...]`: resolve the spec, read the prompt, load tools, run the loop, print the
 * result. stdout gets only the result (cli/output.ts); stderr only events (cli/events/sink.ts).
 *
 * Rules:
 * - A problem before the run starts (bad flags, bad spec, no prompt) is exit 2: in ndjson mode it
 *   is reported as a lone `agentEnd` event with stopReason `error`, so stderr stays machine-readable.
 * - The run's one abort signal covers everything from the spec on: reading stdin and loading tools
 *   too. A signal ends it `aborted` (128 + the signal's number), the run deadline (`--timeout`,
 *   counted from when the spec is read) `timeout` (exit 3), an event loop that ran dry (nothing
 *   left to wait for, see ../drain.ts) `error` (exit 1).
 * - After the loop: the answer is printed first, then `--record` and `--session` are written,
 *   then the one `agentEnd` (held back by ../events/run-stream.ts) is written; a failed write
 *   there is named in that `agentEnd` and turns a successful run into exit 1.
 * - A run whose code is stuck is ended from outside the loop: synchronous code past the deadline
 *   (../watchdog.ts), or an event loop still dry after the abort. The stream then closes the open
 *   calls and the turn itself, and the process exits.
 */
import { randomUUID } from "node:crypto";
import { exitProcess, guardChannels } from "../../channels/guard.js";
import type { ResolvedSpec } from "../../config/types.js";
import { createRedactor, type Redactor } from "../../loop/redact.js";
import { secretValues } from "../../config/redact.js";
import { RunStop, runStopOf, untilAborted } from "../../loop/abort.js";
import type { AgentEvent, RunResult, StopReason } from "../../loop/types.js";
import type { ChatMessage, Provider } from "../../provider/types.js";
import { createEventSink, defaultEventsMode, type CliEventSink, type EventsMode } from "../events/sink.js";
import { createRunStream, type RunStream } from "../events/run-stream.js";
import { toJsonSafe } from "../events/serialize.js";
import { EXIT, exitCodeFor, exitCodeForSignal } from "../exit-codes.js";
import { reportUsageError, UsageError } from "../errors.js";
import { packageVersion } from "../main.js";
import { loadRegistry, loadSpecFromArgv } from "../setup.js";
import { composePrompt, readStdin, STDIN_GRACE_MS } from "../stdin.js";
import { parseMessagesNdjson } from "../messages-input.js";
import { beforeForcedExit, installSignalHandlers } from "../signals.js";
import { loadSession, saveSession } from "../session.js";
import { DRAINED_HINT, onEventLoopDrained } from "../drain.js";
import { exitFromWatchdog, startWatchdog } from "../watchdog.js";
import { armExitBound, settleWithin } from "../bounded-exit.js";

/** What the parts of one run share. */
interface RunContext {
  argv: Record<string, unknown>;
  mode: EventsMode;
  sink: CliEventSink;
  stream: RunStream;
  runId: string;
  /** The run's one abort signal (signals, deadline, drained event loop). */
  signal: AbortSignal;
  abort(reason: unknown): void;
  received(): NodeJS.Signals | null;
  /** Set once the command-tool module is loaded: kills every live child process group. */
  killChildren(): void;
  /**
   * Stops the deadline timer and its watchdog; with `keepWatchdog`, the watchdog stays armed (a
   * run the deadline stopped: a tool's late timer may still spin before agentEnd is written).
   */
  stopDeadline(keepWatchdog?: boolean): void;
  /** A `warning` event once the loop has started (held until then). */
  warn(message: string): void;
  /** Warnings given before the loop started. */
  earlyWarnings: string[];
}

/** Thrown (inside run) when the run's signal aborts before the loop has started. */
class Interrupted extends Error {
  constructor(readonly reason: unknown) {
    super("interrupted");
  }
}

export async function handler(argv: Record<string, unknown>): Promise<number> {
  const mode = (argv.events as EventsMode | undefined) ?? defaultEventsMode();
  const sink = createEventSink({ mode });
  const runId = randomUUID();
  const stream = createRunStream(runId, sink.emit);
  // The signal handlers stay installed until the process exits: a signal that arrives while the
  // result is being flushed must still end the process with its code, never by the default action.
  const signals = installSignalHandlers();
  const stop = new AbortController();
  const ctx: RunContext = {
    argv,
    mode,
    sink,
    stream,
    runId,
    signal: stop.signal,
    abort: (reason) => {
      if (!stop.signal.aborted) stop.abort(reason);
    },
    received: () => signals.received,
    killChildren: () => {},
    stopDeadline: () => {},
    earlyWarnings: [],
    warn: (message) => ctx.earlyWarnings.push(message),
  };
  guardRun(ctx);
  signals.controller.signal.addEventListener("abort", () => ctx.abort(signals.controller.signal.reason), { once: true });
  // A second signal exits at once: the run's events still end with agentEnd.
  beforeForcedExit(() => endFromOutside(ctx, "aborted", "run aborted: a second signal ended it at once"));
  // Nothing left to wait for: first abort the run (the loop ends it as an error); if that does
  // not end it either, the loop's own code is gone or waits forever: end it from outside.
  onEventLoopDrained(() => {
    if (!stop.signal.aborted) {
      ctx.abort(new RunStop("error", `the run stopped before it finished: ${DRAINED_HINT}`));
      return;
    }
    const [stopReason, message] = describeStop(stop.signal.reason);
    const code = endFromOutside(ctx, stopReason, message);
    void sink.close().finally(() => exitProcess(code));
  });
  let code: number;
  try {
    code = await run(ctx);
  } catch (error) {
    code = reportFatal(ctx, error);
  } finally {
    ctx.stopDeadline();
  }
  // The last event is written: neither a stalled stderr reader nor tool code (a late timer that
  // spins, an exit listener that never returns) may hold the exit (../bounded-exit.ts). A signal
  // that ended the run still lets its events drain (within the grace); one after it cuts the wait.
  armExitBound(code);
  await settleWithin(sink.close(), signals.received ? undefined : signals.controller.signal);
  return code;
}

/**
 * Tool and hook code may not write to stdout or stderr, end the process or crash it
 * (../../channels/guard.ts): its output becomes `warning` events (redacted like every event;
 * lines written while tools load come right after agentStart), a throw or rejection nobody
 * handled ends the run as an error.
 */
function guardRun(ctx: RunContext): void {
  guardChannels({
    onOutput: ({ stream, text }) => ctx.warn(`tool or hook code wrote to ${stream}: ${text}`),
    onUncaught: (error, kind) => {
      const what = kind === "exception" ? "threw outside its call" : "left a promise rejection unhandled";
      ctx.abort(new RunStop("error", `tool or hook code ${what}: ${messageOf(error)}`));
    },
  });
}

/** The stop reason and message for the run signal's abort reason. */
function describeStop(reason: unknown): [StopReason, string] {
  const runStop = runStopOf(reason);
  if (runStop) return [runStop.stopReason, runStop.message];
  return ["aborted", "run aborted"];
}

/** Closes the event stream from outside the loop (run-stream.ts) and kills child groups; the exit code. */
function endFromOutside(ctx: RunContext, stopReason: StopReason, message: string): number {
  ctx.stream.close(stopReason, message);
  ctx.stream.finish();
  try {
    ctx.killChildren();
  } catch {
    // exiting anyway
  }
  return stopReason === "aborted" ? exitCodeForSignal(ctx.received()) : exitCodeFor(stopReason);
}

/** `work`, unless the run's signal aborts first (then it throws Interrupted). */
function unlessStopped<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return untilAborted(work, signal, () => {
    throw new Interrupted(signal.reason);
  });
}

async function run(ctx: RunContext): Promise<number> {
  const { argv, signal } = ctx;
  const spec = await unlessStopped(loadSpecFromArgv(argv, !argv["dry-run"]), signal);
  const secrets = secretValues(process.env, [spec.model.apiKey]);
  const redact = createRedactor(secrets);
  startDeadline(ctx, spec);
  const processes = await import("../../tools/process.js");
  processes.addSecretEnvNames(spec.model.apiKeyEnv);
  ctx.killChildren = () => processes.killAllChildren();
  const messages = await unlessStopped(initialMessages(argv, spec), signal);
  const [{ createProvider }, { runAgent }, loaded, policy, hooks] = await unlessStopped(Promise.all([
    import("../../provider/create.js"),
    import("../../loop/run-agent.js"),
    loadRegistry(spec),
    import("../../tools/policy.js").then((m) => m.createToolPolicy(spec.tools.allow, spec.tools.deny)),
    import("../../hooks/index.js").then((m) => m.loadSpecHooks(spec.hooks, { cwd: spec.baseDir })),
  ]), signal);
  let provider: Provider = await createProvider({
    name: spec.model.replayFile ? `replay:${spec.model.replayFile}` : spec.model.name,
    baseURL: spec.model.baseURL,
    apiKey: spec.model.apiKey,
    temperature: spec.model.temperature,
    maxTokens: spec.model.maxTokens,
    maxTokensField: spec.model.maxTokensField,
    stream: spec.model.stream,
    streamUsage: spec.model.streamUsage,
    textToolCalls: spec.model.textToolCalls,
    maxRetries: spec.model.maxRetries,
    timeoutMs: spec.model.timeoutMs,
  });

  if (argv["dry-run"]) {
    const [{ redactSpec }, { printJson }] = await Promise.all([import("../../config/redact.js"), import("../output.js")]);
    const tools = loaded.registry.list().filter((t) => policy(t.name));
    const request = provider.describeRequest?.({
      messages,
      tools: tools.map((t) => ({ name: t.name, description: t.description, parameters: t.inputSchema })),
    }) ?? null;
    await printJson(redact({ spec: redactSpec(spec), tools: tools.map((t) => t.name), problems: loaded.problems, request }));
    return EXIT.ok;
  }

  let recorder: { flush(): Promise<void> } | undefined;
  if (argv.record !== undefined) {
    const { createRecorder } = await import("../../provider/record.js");
    const recording = createRecorder(provider, String(argv.record), { redact });
    provider = recording;
    recorder = recording;
  }
  const { withRedactedDeltas } = await import("../../provider/redacting.js");
  provider = withRedactedDeltas(provider, secrets);

  const result: RunResult = await runAgent({
    provider,
    registry: loaded.registry,
    messages,
    toolExecution: spec.toolExecution,
    // The deadline is this command's (it started before stdin and the tools): see startDeadline.
    limits: { ...spec.limits, runTimeoutMs: 0 },
    hooks,
    isToolAllowed: policy,
    signal,
    runId: ctx.runId,
    configPath: spec.configPath,
    yiemVersion: packageVersion(),
    onEvent: (event) => ctx.stream.emit(redactEvent(redact, event)),
    startWarnings: [
      ...loaded.problems.map((p) => ({ message: `tool not loaded: ${p.reason}`, path: p.path })),
      ...ctx.earlyWarnings.map((message) => ({ message })),
    ],
    attachWarnings: (warn) => {
      ctx.warn = (message) => warn({ message });
    },
  });
  // A run the deadline stopped has no answer to print: its watchdog stays armed until agentEnd.
  ctx.stopDeadline(result.stopReason === "timeout");
  return finishRun(ctx, result, redact, recorder);
}

/**
 * After the loop: the answer, then the side files, then the held agentEnd. A failed write is
 * named in agentEnd and makes a successful run exit 1; nothing after agentEnd is ever written.
 */
async function finishRun(ctx: RunContext, result: RunResult, redact: Redactor, recorder: { flush(): Promise<void> } | undefined): Promise<number> {
  const { argv } = ctx;
  const failures: string[] = [];
  const { printResult } = await import("../output.js");
  try {
    await printResult({ ...result, text: redact(result.text), error: redact(result.error) }, argv.output === "json" ? "json" : "text");
  } catch (error) {
    failures.push(`could not write the answer to stdout: ${messageOf(error)}`);
  }
  try {
    await recorder?.flush();
  } catch (error) {
    failures.push(messageOf(error));
  }
  if (argv.session !== undefined) {
    try {
      await saveSession(String(argv.session), result.messages);
    } catch (error) {
      failures.push(`could not write the session file ${String(argv.session)}: ${messageOf(error)}`);
    }
  }
  const failure = failures.length > 0 ? redact(failures.join("; ")) : undefined;
  ctx.stream.finish(failure);
  if (failure === undefined) return exitCodeFor(result.stopReason, ctx.received());
  if (ctx.mode === "none") reportUsageError(failure);
  const succeeded = result.stopReason === "completed" || result.stopReason === "terminated";
  return succeeded ? EXIT.failure : exitCodeFor(result.stopReason, ctx.received());
}

/** An event with secrets hidden; an event the redactor cannot walk is made JSON-safe first, never dropped. */
function redactEvent(redact: Redactor, event: AgentEvent): AgentEvent {
  try {
    return redact(event);
  } catch {
    return redact(toJsonSafe(event) as AgentEvent);
  }
}

/**
 * The run deadline (`--timeout` / limits.runTimeoutMs), counted from now: the spec is read, stdin
 * and the tools are still to come. When the run may execute tool or hook modules, a watchdog
 * thread also ends code that never yields (../watchdog.ts).
 */
function startDeadline(ctx: RunContext, spec: ResolvedSpec): void {
  const ms = spec.limits.runTimeoutMs;
  if (!(ms > 0)) return;
  const message = `run timed out after ${ms} ms`;
  let watchdog: { disarm(): void } | undefined;
  // The watchdog stays armed past the abort: an abort listener of a tool that never returns is
  // stuck code too. It is disarmed once the loop has returned (stopDeadline), or, for a run the
  // deadline stopped, once its agentEnd is written.
  const timer = setTimeout(() => ctx.abort(new RunStop("timeout", message)), ms);
  // The deadline alone does not keep the process alive: a run with nothing else left to wait
  // for can never finish, and is reported at once (drain.ts) rather than when the deadline passes.
  timer.unref();
  const onStuck = () => {
    const code = endFromOutside(ctx, "timeout", `${message}: synchronous code of a tool or hook did not yield, so the process was ended`);
    exitFromWatchdog(code);
  };
  ctx.stopDeadline = (keepWatchdog = false) => {
    clearTimeout(timer);
    const armed = watchdog;
    watchdog?.disarm();
    // Re-armed from now: the side files of a stopped run still get their time to be written.
    watchdog = keepWatchdog && armed ? startWatchdog(Date.now(), onStuck) : undefined;
  };
  // Every run that may run code of a tool, hook or model-written tool (writeTool) is guarded.
  const mayRunModules = spec.toolDirs.length > 0 || spec.builtinTools.includes("writeTool") ||
    Boolean(spec.hooks.beforeToolCall) || Boolean(spec.hooks.afterToolCall);
  if (!mayRunModules) return;
  // Started before any tool module is evaluated: a module's top level may be what never yields.
  watchdog = startWatchdog(Date.now() + ms, onStuck);
}

/** System prompt, the saved session, then the new prompt (words + stdin, or NDJSON messages). */
async function initialMessages(argv: Record<string, unknown>, spec: ResolvedSpec): Promise<ChatMessage[]> {
  const words = ((argv.prompt as string[] | undefined) ?? []).map(String);
  const hasPrompt = words.join("").trim() !== "";
  const stdinText = await readStdin(hasPrompt ? { graceMs: STDIN_GRACE_MS } : {});
  const messages: ChatMessage[] = [];
  // A history may not call a tool this spec refuses (session.ts).
  const allowed = (await import("../../tools/policy.js")).createToolPolicy(spec.tools.allow, spec.tools.deny);
  if (spec.systemPrompt) messages.push({ role: "system", content: spec.systemPrompt });
  if (argv.session !== undefined) messages.push(...(await loadSession(String(argv.session), allowed)));
  if (argv["input-format"] === "ndjson") {
    if (hasPrompt) messages.push({ role: "user", content: words.join(" ") });
    messages.push(...parseMessagesNdjson(stdinText ?? "", allowed));
  } else {
    const prompt = composePrompt(words, stdinText);
    if (prompt) messages.push({ role: "user", content: prompt });
  }
  if (!messages.some((m) => m.role === "user")) {
    throw new UsageError('no prompt: give it as words (yiem run "…"), pipe it on stdin, or use --input-format ndjson');
  }
  return messages;
}

function isUsageProblem(error: unknown): boolean {
  const name = (error as { name?: string } | null)?.name;
  return name === "UsageError" || name === "ConfigError";
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A run that could not start (or was stopped before the loop began) still ends with one
 * `agentEnd` (with `--events none`, an error is one plain line); returns the exit code.
 */
function reportFatal(ctx: RunContext, error: unknown): number {
  const redact = createRedactor(secretValues(process.env));
  if (error instanceof Interrupted) {
    const [stopReason, message] = describeStop(error.reason);
    if (ctx.mode === "none" && stopReason === "error") reportUsageError(redact(message));
    return endFromOutside(ctx, stopReason, redact(message));
  }
  const message = redact(messageOf(error));
  if (ctx.stream.ended) {
    // The loop has ended (its agentEnd is held): the failure goes into that agentEnd.
    ctx.stream.finish(message);
    if (ctx.mode === "none") reportUsageError(message);
    return EXIT.failure;
  }
  if (ctx.mode === "none") {
    reportUsageError(message);
    return isUsageProblem(error) ? EXIT.usage : EXIT.failure;
  }
  endFromOutside(ctx, "error", message);
  if (ctx.argv.debug && error instanceof Error && error.stack) ctx.sink.log(redact(error.stack));
  return isUsageProblem(error) ? EXIT.usage : EXIT.failure;
}
