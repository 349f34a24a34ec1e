/**
 * `yiem run [prompt...]`: resolve the spec, read the prompt, load tools, run the loop, print the
 * result. stdout gets only the result (cli/output.ts); stderr only events (cli/events/sink.ts).
 *
 * Rules:
 * - A problem before the run starts (bad flags, bad spec, no prompt) is exit 2: in ndjson mode it
 *   is reported as a lone `agentEnd` event with stopReason `error`, so stderr stays machine-readable.
 *   All such problems are reported together (../preflight.ts, config/problems.ts).
 * - Load problems (../setup.ts `findLoadProblems`) are `warning` events after agentStart; under
 *   strict loading they end the run the same way, exit 2, before the model is called.
 * - The run's one abort signal covers everything from the spec on: reading stdin and loading tools
 *   too. A signal ends it `aborted` (128 + the signal's number), the run deadline (`--timeout`,
 *   counted from when the spec is read) `timeout` (exit 3), an event loop that ran dry (nothing
 *   left to wait for, see ../drain.ts) `error` (exit 1).
 * - After the loop: the answer is printed first, then `--record` and `--session` (or the stored
 *   session, ../run-session.ts) are written, then the one `agentEnd` (held back by
 *   ../events/run-stream.ts) is written; a failed write there is named in that `agentEnd` and
 *   turns a successful run into exit 1. A stored session's lock is released on every path.
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
import type { AgentEvent, AgentEventBody, RunResult, StopReason } from "../../loop/types.js";
import type { ChatMessage, Provider } from "../../provider/types.js";
import { createEventSink, defaultEventsMode, type CliEventSink, type EventsMode } from "../events/sink.js";
import { createRunStream, withFailure, type RunStream } from "../events/run-stream.js";
import { printResultJsonSync, unfinishedResult } from "../output.js";
import { toJsonSafe } from "../events/serialize.js";
import { EXIT, exitCodeFor, exitCodeForSignal } from "../exit-codes.js";
import { reportUsageError, UsageError } from "../errors.js";
import { packageVersion } from "../main.js";
import { findLoadProblems, loadProblemMessage, loadRegistry, loadSpecFromArgv, withMcp, type LoadProblem } from "../setup.js";
import { commandLineProblems, strictLoadError } from "../preflight.js";
import { readStdin, type StdinResult } from "../stdin.js";
import { initialMessages, promptInput, stdinIgnoredWarning, type PromptInput } from "../prompt-input.js";
import { createEventStamper } from "../../loop/events.js";
import { beforeForcedExit, installSignalHandlers } from "../signals.js";
import { watchParent } from "../parent-watch.js";
import { deniedCallProblem, loadSession, saveSession } from "../session.js";
import { openRunSession, sessionRequest, type RunSession } from "../run-session.js";
import { describeHolder } from "../../sessions/lock.js";
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
  /** When the command started (`performance.now()`): durations count from here, stdin included. */
  startedAt: number;
  /** The run's one abort signal (signals, deadline, drained event loop). */
  signal: AbortSignal;
  abort(reason: unknown): void;
  received(): NodeJS.Signals | null;
  /** True once the result has been (or is being) printed: `--output json` prints exactly one. */
  resultPrinted: boolean;
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
  /** Set once MCP servers are connected: closes them (stdin, wait, then the whole group). */
  closeMcp(): Promise<void>;
  /** The stored session the run reads and saves, once opened (docs/sessions.md). */
  session?: RunSession;
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
    startedAt: performance.now(),
    resultPrinted: false,
    signal: stop.signal,
    abort: (reason) => {
      if (!stop.signal.aborted) stop.abort(reason);
    },
    received: () => signals.received,
    killChildren: () => {},
    stopDeadline: () => {},
    closeMcp: async () => {},
    earlyWarnings: [],
    warn: (message) => ctx.earlyWarnings.push(message),
  };
  guardRun(ctx);
  signals.controller.signal.addEventListener("abort", () => ctx.abort(signals.controller.signal.reason), { once: true });
  // A parent that is gone (killed without passing the signal on) ends the run as SIGHUP would.
  watchParent((parent) => signals.raise("SIGHUP", new RunStop("aborted", `run aborted: yiem's parent process (pid ${parent}) exited`)));
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
    await ctx.closeMcp().catch(() => {});
    await ctx.session?.release().catch(() => {});
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

/**
 * Closes the event stream from outside the loop (run-stream.ts), kills child groups and, with
 * `--output json`, prints the result if nothing printed it yet; returns the exit code (`code`,
 * else the stop reason's).
 */
function endFromOutside(ctx: RunContext, stopReason: StopReason, message: string, code?: number): number {
  ctx.stream.close(stopReason, message);
  ctx.stream.finish();
  try {
    ctx.killChildren();
  } catch {
    // exiting anyway
  }
  const exit = code ?? (stopReason === "aborted" ? exitCodeForSignal(ctx.received()) : exitCodeFor(stopReason));
  printUnfinished(ctx, exit);
  return exit;
}

/** With `--output json`, the result of a run that ends without the loop's own result: once, at once. */
function printUnfinished(ctx: RunContext, exitCode: number): void {
  if (ctx.argv.output !== "json" || ctx.resultPrinted) return;
  ctx.resultPrinted = true;
  const end = ctx.stream.outcome;
  printResultJsonSync(unfinishedResult({ runId: ctx.runId, stopReason: "error", ...end }), exitCode, ctx.stream.sessionId ?? null);
}

/** `work`, unless the run's signal aborts first (then it throws Interrupted). */
function unlessStopped<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return untilAborted(work, signal, () => {
    throw new Interrupted(signal.reason);
  });
}

async function run(ctx: RunContext): Promise<number> {
  const { argv, signal } = ctx;
  // Every mistake at once, before the key is asked for: the command line's with the spec's.
  const spec = await unlessStopped(loadSpecFromArgv(argv, !argv["dry-run"], commandLineProblems(argv)), signal);
  const secrets = secretValues(process.env, [spec.model.apiKey]);
  const redact = createRedactor(secrets);
  startDeadline(ctx, spec);
  const processes = await import("../../tools/process.js");
  processes.addSecretEnvNames(spec.model.apiKeyEnv);
  ctx.killChildren = () => processes.killAllChildren();
  const input = promptInput(argv);
  const stored = sessionRequest(argv, spec);
  const stdin = await readPromptStdin(ctx, input);
  // The run's tool policy; a history (--session, a stored session, NDJSON messages) may not call a tool it refuses.
  const allowed = (await import("../../tools/policy.js")).createToolPolicy(spec.tools.allow, spec.tools.deny);
  const session = argv.session === undefined
    ? refuseDeniedCalls(await openStoredSession(ctx, spec, stored), allowed, ctx.session ? `session ${ctx.session.id}` : "the session")
    : await unlessStopped(loadSession(String(argv.session), allowed), signal);
  const messages = initialMessages(argv, spec, input, stdin, session, allowed);
  const stdinWarnings = stdin.kind === "ignored" ? [stdinIgnoredWarning(stdin.graceMs)] : [];
  const [{ createProvider }, { runAgent }, loaded, policy, hooks] = await unlessStopped(Promise.all([
    import("../../provider/create.js"),
    import("../../loop/run-agent.js"),
    loadRegistry(spec).then((loaded) => withMcp(loaded, spec, packageVersion(), signal)),
    Promise.resolve(allowed),
    import("../../hooks/index.js").then((m) => m.loadSpecHooks(spec.hooks, { cwd: spec.baseDir })),
  ]), signal);
  const mcp = loaded.mcp;
  if (mcp) ctx.closeMcp = () => mcp.close();
  const loadProblems = await findLoadProblems(spec, loaded);
  const strictError = strictLoadError(spec, loadProblems);
  if (strictError) throw strictError;
  let provider: Provider = await createProvider({
    name: spec.model.replayFile ? `replay:${spec.model.replayFile}` : spec.model.name,
    baseURL: spec.model.baseURL,
    apiKey: spec.model.apiKey,
    apiKeyEnv: spec.model.apiKeyEnv,
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
    await printJson(redact({ spec: redactSpec(spec), tools: tools.map((t) => t.name), problems: loadProblems.map(problemJson), request }));
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
    startedAt: ctx.startedAt,
    startWarnings: [
      ...stdinWarnings,
      ...loadProblems.map((p) => ({ message: loadProblemMessage(p), ...(p.path ? { path: p.path } : {}) })),
      ...ctx.earlyWarnings.map((message) => ({ message })),
    ],
    attachWarnings: (warn) => {
      ctx.warn = (message) => warn({ message });
    },
    ...(mcp ? {
      mcpServers: mcp.servers,
      onStart: (emit) => {
        for (const body of mcp.startEvents) emit(body);
        mcp.attach(emit);
      },
    } : {}),
  });
  // A run the deadline stopped has no answer to print: its watchdog stays armed until agentEnd.
  ctx.stopDeadline(result.stopReason === "timeout");
  return finishRun(ctx, result, redact, recorder);
}

/**
 * After the loop: the answer, then the side files, then the held agentEnd. A failed write is
 * named in agentEnd and makes a successful run exit 1; nothing after agentEnd is ever written.
 * With `--output json` the side files come first, so the one JSON result can carry the final
 * stop reason, error and exit code.
 */
async function finishRun(ctx: RunContext, result: RunResult, redact: Redactor, recorder: { flush(): Promise<void> } | undefined): Promise<number> {
  const { argv } = ctx;
  const json = argv.output === "json";
  const failures: string[] = [];
  const { printResult } = await import("../output.js");
  const shown: RunResult = { ...result, text: redact(result.text), error: redact(result.error) };
  const print = async (final: RunResult, code: number) => {
    ctx.resultPrinted = true;
    try {
      await printResult(final, json ? "json" : "text", process.stdout, code, ctx.stream.sessionId ?? null);
    } catch (error) {
      failures.push(`could not write the answer to stdout: ${messageOf(error)}`);
    }
  };
  if (!json) await print(shown, exitCodeFor(result.stopReason, ctx.received()));
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
  if (ctx.session) {
    try {
      await ctx.session.save(result);
    } catch (error) {
      failures.push(`could not save session ${ctx.session.id}, this run was not added to it: ${messageOf(error)}`);
    }
    await ctx.session.release();
  }
  const failureOf = () => (failures.length > 0 ? redact(failures.join("; ")) : undefined);
  if (json) {
    const final = withFailure(shown, failureOf());
    await print(final, exitCodeOf(ctx, result.stopReason, failureOf()));
  }
  const failure = failureOf();
  ctx.stream.finish(failure);
  if (failure !== undefined && ctx.mode === "none") reportUsageError(failure);
  return exitCodeOf(ctx, result.stopReason, failure);
}

/** The exit code of a run the loop ended, given a failure after it (see withFailure). */
function exitCodeOf(ctx: RunContext, stopReason: StopReason, failure: string | undefined): number {
  const succeeded = stopReason === "completed" || stopReason === "terminated";
  return failure !== undefined && succeeded ? EXIT.failure : exitCodeFor(stopReason, ctx.received());
}

/** A load problem in `--dry-run`'s `problems`: `{path, reason}` as `yiem tools check` prints it, path omitted when none. */
function problemJson(problem: LoadProblem): { path?: string; reason: string } {
  return { ...(problem.path ? { path: problem.path } : {}), reason: problem.reason };
}

/** `history`, unless one of its messages calls a tool `allowed` refuses (a usage error naming `where`). */
function refuseDeniedCalls(history: ChatMessage[], allowed: (name: string) => boolean, where: string): ChatMessage[] {
  history.forEach((message, at) => {
    const problem = deniedCallProblem(message, allowed);
    if (problem) throw new UsageError(`${where}: messages[${at}]: ${problem}`);
  });
  return history;
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

/**
 * stdin for the prompt (./stdin.ts). In the pretty view, a wait of over a second is explained;
 * a deadline or signal that ends the wait says, in agentEnd, that stdin was being waited for.
 */
async function readPromptStdin(ctx: RunContext, input: PromptInput): Promise<StdinResult> {
  const hasPrompt = input.words.some((word, at) => at !== input.stdinAt && word.trim() !== "");
  const waitingNote = input.stdinMode === "wait"
    ? "waiting for stdin to end (--stdin, or the prompt word -); Ctrl-D ends typed input, Ctrl-C stops"
    : "waiting for stdin to end: pipe the prompt in or give it as words; --no-stdin skips stdin";
  try {
    return await unlessStopped(readStdin({
      mode: input.stdinMode,
      graceMs: hasPrompt ? input.graceMs : undefined,
      onWaiting: () => ctx.sink.log(waitingNote),
    }), ctx.signal);
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
    const [stopReason, message] = describeStop(error.reason);
    throw new Interrupted(new RunStop(stopReason === "timeout" ? "timeout" : stopReason === "error" ? "error" : "aborted", `${message} while waiting for stdin to end`));
  }
}

/**
 * The stored session's history (../run-session.ts), [] when the run uses none. A deadline or
 * signal that ends a wait for another run's lock says so in agentEnd.
 */
async function openStoredSession(ctx: RunContext, spec: ResolvedSpec, request: ReturnType<typeof sessionRequest>): Promise<ChatMessage[]> {
  let waitingFor: string | undefined;
  try {
    const session = await unlessStopped(openRunSession(request, spec, {
      signal: ctx.signal,
      dryRun: Boolean(ctx.argv["dry-run"]),
      onId: (id) => {
        ctx.stream.sessionId = id;
      },
      onWaiting: (id, holder) => {
        waitingFor = `session ${id} (in use by ${describeHolder(holder)})`;
        ctx.sink.log(`waiting for ${waitingFor} to be released; --no-wait fails at once instead`);
      },
    }), ctx.signal);
    if (session) ctx.session = session;
    return session?.history ?? [];
  } catch (error) {
    if (!(error instanceof Interrupted) || waitingFor === undefined) throw error;
    const [stopReason, message] = describeStop(error.reason);
    throw new Interrupted(new RunStop(stopReason === "timeout" ? "timeout" : stopReason === "error" ? "error" : "aborted", `${message} while waiting for ${waitingFor}`));
  }
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
  if (ctx.mode === "none") reportUsageError(message);
  if (ctx.stream.ended) {
    // The loop has ended (its agentEnd is held): the failure goes into that agentEnd.
    ctx.stream.finish(message);
    printUnfinished(ctx, EXIT.failure);
    return EXIT.failure;
  }
  const mcpFailures = (error as { name?: string; events?: AgentEvent[] } | null)?.name === "McpRequiredError" ? (error as { events: AgentEventBody[] }).events : [];
  if (mcpFailures.length > 0) {
    // The servers' own reports come first; agentEnd (next seq) then names every failure.
    const stamp = createEventStamper(ctx.runId);
    for (const body of mcpFailures) ctx.stream.emit(redact(stamp(body)));
  }
  const code = isUsageProblem(error) ? EXIT.usage : EXIT.failure;
  endFromOutside(ctx, "error", message, code);
  if (ctx.argv.debug && error instanceof Error && error.stack) ctx.sink.log(redact(error.stack));
  return code;
}
