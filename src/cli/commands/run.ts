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
import { randomUuid } from "../../random-id.js";
import { guardChannels } from "../../channels/guard.js";
import { messageOf } from "../../error-text.js";
import type { ResolvedSpec } from "../../config/types.js";
import { createRedactor, type Redactor } from "../../redact.js";
import { addSecretEnvNames, secretValues } from "../../secrets.js";
import { RunStop } from "../../loop/abort.js";
import { pricedEvent } from "../../loop/cost.js";
import type { Pricing } from "../../loop/types.js";
import { openRunScope, type RunScope } from "../../loop/run-scope.js";
import type { AgentEvent, RunResult } from "../../loop/types.js";
import type { Provider } from "../../provider/types.js";
import { modelServerURL } from "../../provider/reasoning.js";
import { createCallSink, defaultModeOf, type EventsMode } from "../events/sink.js";
import type { CliIo } from "../io.js";
import { createRunStream } from "../events/run-stream.js";
import { toJsonSafe } from "../events/serialize.js";
import { EXIT } from "../exit-codes.js";
import { packageVersion } from "../../package-info.js";
import { callCacheScope, findLoadProblems, loadProblemMessage, loadRegistry, loadSpecFromArgv, withMcp, type LoadProblem } from "../setup.js";
import { commandLineProblems, strictLoadError } from "../preflight.js";
import { initialMessages, promptInput, stdinIgnoredWarning } from "../prompt-input.js";
import { installSignalHandlers } from "../signals.js";
import { loadSession } from "../session.js";
import { sessionRequest } from "../run-session.js";
import { DRAINED_HINT } from "../host/drain.js";
import { armExitBound, settlesAtOnce, settleWithin } from "../bounded-exit.js";
import { describeStop, endFromOutside, unlessStopped, type RunContext } from "./run-context.js";
import { finishRun, reportFatal } from "./run-finish.js";
import { openStoredSession, readPromptStdin, refuseDeniedCalls } from "./run-inputs.js";
import { attachToPrompt, readAttachments, withStdinAttachment } from "../attachments.js";
import { dryRunTools, refuseFinalAnswerClash } from "../structured-output.js";

export async function handler(argv: Record<string, unknown>, io: CliIo): Promise<number> {
  const mode = (argv.events as EventsMode | undefined) ?? defaultModeOf(io);
  const sink = createCallSink(io, mode);
  const runId = randomUuid();
  const startedAt = performance.now();
  // Until the spec names the API key, events hide what the environment's secret variables hold.
  let redact: Redactor = createRedactor(secretValues(io.env));
  // Once the spec states prices, every usage in the events carries its cost (../../loop/cost.ts).
  let pricing: Pricing | undefined;
  const stream = createRunStream(runId, (event) => sink.emit(redactEvent(redact, pricedEvent(event, pricing))), startedAt);
  // The signal handlers stay installed until the process exits: a signal that arrives while the
  // result is being flushed must still end the process with its code, never by the default action.
  const signals = installSignalHandlers(io);
  const stop = new AbortController();
  const ctx: RunContext = {
    argv,
    io,
    mode,
    sink,
    stream,
    runId,
    startedAt,
    setRedactor: (next) => {
      redact = next;
    },
    setPricing: (next) => {
      pricing = next;
    },
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
  io.host.watchParent((parent) => signals.raise("SIGHUP", new RunStop("aborted", `run aborted: yiem's parent process (pid ${parent}) exited`)));
  // A second signal exits at once: the run's events still end with agentEnd.
  signals.beforeForcedExit(() => endFromOutside(ctx, "aborted", "run aborted: a second signal ended it at once"));
  // Nothing left to wait for: first abort the run (the loop ends it as an error); if that does
  // not end it either, the loop's own code is gone or waits forever: end it from outside.
  io.host.onEventLoopDrained(() => {
    if (!ctx.signal.aborted) {
      ctx.abort(new RunStop("error", `the run stopped before it finished: ${DRAINED_HINT}`));
      return;
    }
    const [stopReason, message] = describeStop(ctx.signal.reason);
    const code = endFromOutside(ctx, stopReason, message);
    void sink.close().finally(() => io.host.exitNow(code));
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
  const flushed = sink.close();
  armExitBound(code, io, await settlesAtOnce(flushed));
  await settleWithin(flushed, io.env, signals.received ? undefined : signals.controller.signal);
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

async function run(ctx: RunContext): Promise<number> {
  const { argv } = ctx;
  // Every mistake at once, before the key is asked for: the command line's with the spec's.
  const spec = await unlessStopped(loadSpecFromArgv(argv, ctx.io, !argv["dry-run"], commandLineProblems(argv, ctx.io)), ctx.signal);
  const secrets = secretValues(ctx.io.env, [spec.model.apiKey]);
  const redact = createRedactor(secrets);
  ctx.setRedactor(redact);
  ctx.setPricing(spec.model.pricing);
  // From here on ctx.signal is the run's scope: the signals and the deadline in one.
  const scope = startDeadline(ctx, spec);
  const signal = scope.signal;
  const processes = await import("../../tools/process.js");
  addSecretEnvNames(spec.model.apiKeyEnv);
  ctx.killChildren = () => processes.killAllChildren();
  const input = withStdinAttachment(promptInput(argv, ctx.io.env), spec, argv);
  const stored = sessionRequest(argv, spec);
  const stdin = await readPromptStdin(ctx, input);
  const attachments = await unlessStopped(readAttachments(spec.attachments, () => ctx.io.stdin, signal), signal);
  // The run's tool policy; a history (--session, a stored session, NDJSON messages) may not call a tool it refuses.
  const allowed = (await import("../../tools/policy.js")).createToolPolicy(spec.tools.allow, spec.tools.deny);
  const session = argv.session === undefined
    ? refuseDeniedCalls(await openStoredSession(ctx, spec, stored), allowed, ctx.session ? `session ${ctx.session.id}` : "the session")
    : await unlessStopped(loadSession(String(argv.session), allowed, ctx.io.cwd), signal);
  const messages = attachToPrompt(initialMessages(argv, spec, input, stdin, session, allowed), attachments);
  const stdinWarnings = stdin.kind === "ignored" ? [stdinIgnoredWarning(stdin.graceMs)] : [];
  const [{ providerFor }, { runAgent }, loaded, policy, hooks] = await unlessStopped(Promise.all([
    import("../provider-for.js"),
    import("../../loop/run-agent.js"),
    loadRegistry(spec, callCacheScope(ctx.io)).then((loaded) => withMcp(loaded, spec, packageVersion(), signal)),
    Promise.resolve(allowed),
    import("../../hooks/index.js").then((m) => m.loadSpecHooks(spec.hooks, { cwd: spec.baseDir, cache: callCacheScope(ctx.io), env: ctx.io.env })),
  ]), signal);
  const mcp = loaded.mcp;
  if (mcp) ctx.closeMcp = () => mcp.close();
  const loadProblems = await findLoadProblems(spec, loaded);
  const strictError = strictLoadError(spec, loadProblems, ctx.io.cwd);
  if (strictError) throw strictError;
  refuseFinalAnswerClash(spec, loaded.registry);
  const debug = (await import("../http-debug.js")).httpDebug(argv, ctx.io.env);
  let provider: Provider = await providerFor(spec, ctx.io.env, debug.onHttp ? { onHttp: debug.onHttp } : {});

  if (argv["dry-run"]) {
    const [{ redactSpec }, { printJson }] = await Promise.all([import("../../config/redact.js"), import("../output.js")]);
    const tools = loaded.registry.list().filter((t) => policy(t.name));
    const request = provider.describeRequest?.({
      messages,
      ...dryRunTools(spec, tools.map((t) => ({ name: t.name, description: t.description, parameters: t.inputSchema }))),
    }) ?? null;
    await printJson(redact({ spec: redactSpec(spec, ctx.io.env), tools: tools.map((t) => t.name), problems: loadProblems.map(problemJson), request }), ctx.io.stdout);
    return EXIT.ok;
  }

  let recorder: { flush(): Promise<void> } | undefined;
  if (argv.record !== undefined) {
    const { createRecorder } = await import("../../provider/record.js");
    const recording = createRecorder(provider, String(argv.record), { redact, cwd: ctx.io.cwd });
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
    limits: spec.limits,
    hooks,
    isToolAllowed: policy,
    ...(spec.model.pricing ? { pricing: spec.model.pricing } : {}),
    ...(spec.output ? { output: spec.output } : {}),
    // The run's scope opened when the spec was read (stdin and tool loading count): see startDeadline.
    scope,
    frame: ctx.stream.frame,
    framing: {
      configPath: spec.configPath,
      ...(spec.model.replayFile ? {} : { baseURL: modelServerURL(spec.model.baseURL, ctx.io.env) }),
      yiemVersion: packageVersion(),
      startedAt: ctx.startedAt,
      startWarnings: [
        ...stdinWarnings,
        ...loadProblems.map((p) => ({ message: loadProblemMessage(p), ...(p.path ? { path: p.path } : {}) })),
        ...ctx.earlyWarnings.map((message) => ({ message })),
      ],
      attachWarnings: (warn) => {
        ctx.warn = (message) => warn({ message });
      },
      ...(mcp ? { mcpServers: mcp.servers } : {}),
      onStart: (emit) => {
        if (mcp) {
          for (const body of mcp.startEvents) emit(body);
          mcp.attach(emit);
        }
        debug.attach(emit);
      },
    },
  });
  // A run the deadline stopped has no answer to print: its watchdog stays armed until agentEnd.
  ctx.stopDeadline(result.stopReason === "timeout");
  return finishRun(ctx, result, redact, recorder);
}

/** A load problem in `--dry-run`'s `problems`: `{path, reason}` as `yiem tools check` prints it, path omitted when none. */
function problemJson(problem: LoadProblem): { path?: string; reason: string } {
  return { ...(problem.path ? { path: problem.path } : {}), reason: problem.reason };
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
 * Opens the run's scope (../../loop/run-scope.ts): the command's signal and the run deadline
 * (`--timeout` / limits.runTimeoutMs), counted from now: the spec is read, stdin and the tools
 * are still to come. The loop is given this scope, so the run has one deadline. When the run may
 * execute tool or hook modules, a watchdog thread also ends code that never yields at that
 * deadline (../watchdog.ts).
 */
function startDeadline(ctx: RunContext, spec: ResolvedSpec): RunScope {
  const ms = spec.limits.runTimeoutMs;
  // The deadline alone does not keep the process alive: a run with nothing else left to wait
  // for can never finish, and is reported at once (drain.ts) rather than when the deadline passes.
  const scope = openRunScope({ signal: ctx.signal, timeoutMs: ms, keepAlive: false });
  ctx.signal = scope.signal;
  ctx.stopDeadline = () => scope.dispose();
  if (scope.deadlineAt === undefined) return scope;
  const message = `run timed out after ${ms} ms`;
  let watchdog: { disarm(): void } | undefined;
  // The watchdog stays armed past the abort: an abort listener of a tool that never returns is
  // stuck code too. It is disarmed once the loop has returned (stopDeadline), or, for a run the
  // deadline stopped, once its agentEnd is written.
  const onStuck = () => {
    const code = endFromOutside(ctx, "timeout", `${message}: synchronous code of a tool or hook did not yield, so the process was ended`);
    ctx.io.host.exitFromWatchdog(code);
  };
  ctx.stopDeadline = (keepWatchdog = false) => {
    scope.dispose();
    const armed = watchdog;
    watchdog?.disarm();
    // Re-armed from now: the side files of a stopped run still get their time to be written.
    watchdog = keepWatchdog && armed ? ctx.io.host.startWatchdog(Date.now(), onStuck) : undefined;
  };
  // Every run that may run code of a tool, hook or model-written tool (writeTool) is guarded.
  const mayRunModules = spec.toolDirs.length > 0 || spec.builtinTools.includes("writeTool") ||
    Boolean(spec.hooks.beforeToolCall) || Boolean(spec.hooks.afterToolCall);
  // Started before any tool module is evaluated: a module's top level may be what never yields.
  if (mayRunModules) watchdog = ctx.io.host.startWatchdog(scope.deadlineAt, onStuck);
  return scope;
}
