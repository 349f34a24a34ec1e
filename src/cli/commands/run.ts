/**
 * `yiem run [prompt...]`: resolve the spec, read the prompt, load tools, run the loop, print the
 * result. stdout gets only the result (cli/output.ts); stderr only events (cli/events/sink.ts).
 * A problem before the run starts (bad flags, bad spec, no prompt) is exit 2: in ndjson mode it is
 * reported as a lone `agentEnd` event with stopReason `error`, so stderr stays machine-readable.
 */
import { randomUUID } from "node:crypto";
import type { ResolvedSpec } from "../../config/types.js";
import { createEmitter } from "../../loop/events.js";
import { createRedactor } from "../../loop/redact.js";
import { secretValues } from "../../config/redact.js";
import type { RunResult } from "../../loop/types.js";
import type { ChatMessage, Provider } from "../../provider/types.js";
import { createEventSink, defaultEventsMode, type CliEventSink, type EventsMode } from "../events/sink.js";
import { EXIT, exitCodeFor } from "../exit-codes.js";
import { reportUsageError, UsageError } from "../errors.js";
import { packageVersion } from "../main.js";
import { loadRegistry, loadSpecFromArgv } from "../setup.js";
import { composePrompt, readStdin, STDIN_GRACE_MS } from "../stdin.js";
import { parseMessagesNdjson } from "../messages-input.js";
import { beforeForcedExit, installSignalHandlers } from "../signals.js";
import { loadSession, saveSession } from "../session.js";

export async function handler(argv: Record<string, unknown>): Promise<number> {
  const mode = (argv.events as EventsMode | undefined) ?? defaultEventsMode();
  const sink = createEventSink({ mode });
  const runId = randomUUID();
  const signals = installSignalHandlers();
  try {
    const code = await run(argv, sink, runId, signals.controller.signal, () => signals.received);
    await sink.close();
    return code;
  } catch (error) {
    const isUserError = isUsageProblem(error);
    reportFatal(sink, mode, runId, error, Boolean(argv.debug));
    await sink.close();
    return isUserError ? EXIT.usage : EXIT.failure;
  }
  // The signal handlers stay installed until the process exits: a signal that arrives while the
  // result is being flushed must still end the process with 130/143, never by the default action.
}

async function run(
  argv: Record<string, unknown>,
  sink: CliEventSink,
  runId: string,
  signal: AbortSignal,
  receivedSignal: () => NodeJS.Signals | null,
): Promise<number> {
  const spec = await loadSpecFromArgv(argv, !argv["dry-run"]);
  const secrets = secretValues(process.env, [spec.model.apiKey]);
  const redact = createRedactor(secrets);
  const processes = await import("../../tools/process.js");
  processes.addSecretEnvNames(spec.model.apiKeyEnv);
  beforeForcedExit(() => processes.killAllChildren());
  const messages = await initialMessages(argv, spec);
  const [{ createProvider }, { runAgent }, loaded, policy, hooks] = await Promise.all([
    import("../../provider/create.js"),
    import("../../loop/run-agent.js"),
    loadRegistry(spec),
    import("../../tools/policy.js").then((m) => m.createToolPolicy(spec.tools.allow, spec.tools.deny)),
    import("../../hooks/index.js").then((m) => m.loadSpecHooks(spec.hooks, { cwd: spec.baseDir })),
  ]);
  let provider: Provider = await createProvider({
    name: spec.model.replayFile ? `replay:${spec.model.replayFile}` : spec.model.name,
    baseURL: spec.model.baseURL,
    apiKey: spec.model.apiKey,
    temperature: spec.model.temperature,
    maxTokens: spec.model.maxTokens,
    stream: spec.model.stream,
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
    limits: spec.limits,
    hooks,
    isToolAllowed: policy,
    signal,
    runId,
    configPath: spec.configPath,
    yiemVersion: packageVersion(),
    onEvent: (event) => sink.emit(redact(event)),
    startWarnings: loaded.problems.map((p) => ({ message: `tool not loaded: ${p.reason}`, path: p.path })),
  });
  await recorder?.flush();
  if (argv.session !== undefined) await saveSession(String(argv.session), result.messages);
  const { printResult } = await import("../output.js");
  await printResult({ ...result, text: redact(result.text), error: redact(result.error) }, argv.output === "json" ? "json" : "text");
  return exitCodeFor(result.stopReason, receivedSignal());
}

/** System prompt, the saved session, then the new prompt (words + stdin, or NDJSON messages). */
async function initialMessages(argv: Record<string, unknown>, spec: ResolvedSpec): Promise<ChatMessage[]> {
  const words = ((argv.prompt as string[] | undefined) ?? []).map(String);
  const hasPrompt = words.join("").trim() !== "";
  const stdinText = await readStdin(hasPrompt ? { graceMs: STDIN_GRACE_MS } : {});
  const messages: ChatMessage[] = [];
  if (spec.systemPrompt) messages.push({ role: "system", content: spec.systemPrompt });
  if (argv.session !== undefined) messages.push(...(await loadSession(String(argv.session))));
  if (argv["input-format"] === "ndjson") {
    if (hasPrompt) messages.push({ role: "user", content: words.join(" ") });
    messages.push(...parseMessagesNdjson(stdinText ?? ""));
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

/** A run that could not start still ends with one `agentEnd` (or, with `--events none`, one plain line). */
function reportFatal(sink: CliEventSink, mode: EventsMode, runId: string, error: unknown, debug: boolean): void {
  const redact = createRedactor(secretValues(process.env));
  const message = redact(error instanceof Error ? error.message : String(error));
  if (mode === "none") {
    reportUsageError(message);
    return;
  }
  const emit = createEmitter(runId, sink.emit);
  emit({ type: "agentEnd", stopReason: "error", turns: 0, toolCalls: 0, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, durationMs: 0, error: message });
  if (debug && error instanceof Error && error.stack) sink.log(redact(error.stack));
}
