/**
 * The body of `yiem mcp serve` (./mcp-serve.ts starts the stdio channel and the SDK's import
 * first, then calls `serveSession`).
 * `yiem mcp serve [-c SPEC] [--tool-dir DIR]… [--allow-tools …] [--deny-tools …] [--agent [NAME]]
 * [--http [HOST:]PORT [--token-env NAME] [--allow-origin HOST]…] [--events ndjson|none]`: the
 * resolved spec's tools as an MCP server (docs/mcp.md, "Serving"). Rules:
 * - stdio by default: stdout carries only protocol messages; the channel starts before the spec
 *   is read and answers `initialize` at once (../../mcp/serve/stdio-wire.ts). Tool and hook code
 *   that writes to stdout or stderr (console.log in a body or at import) is captured by the
 *   channel guard: a `warning` event (or a `yiem: …` line with `--events none`);
 * - the session is framed as one run on stderr: agentStart (`serve` says how it is served), the
 *   load warnings, each call's events (`turn` = the call's number), agentEnd (`toolCalls` the
 *   calls answered). Every agent-tool call is a run of its own, with its own runId;
 * - stdin's end (stdio) cancels the calls in flight (their signals abort, command tools' groups
 *   end), waits for them, and exits 0; SIGTERM/SIGINT (and SIGHUP/SIGQUIT) do the same with
 *   128 + the signal's number; a second signal exits at once;
 * - HTTP binds 127.0.0.1 unless a host is named; off loopback `--token-env` is required (exit 2);
 *   the token is a secret: never in events;
 * - a problem before serving (spec, flags, a required MCP server) is exit 2 (1 for the server),
 *   reported as a lone agentEnd, as for `run`; a tool or hook that throws outside its call is a
 *   warning, and the server goes on.
 */
import { randomUuid } from "../../random-id.js";
import { guardChannels } from "../../channels/guard.js";
import { addSecretEnvNames, secretValues } from "../../secrets.js";
import type { ResolvedSpec } from "../../config/types.js";
import { messageOf } from "../../error-text.js";
import type { Emit } from "../../loop/events.js";
import { createRunFrame } from "../../loop/run-frame.js";
import { createRedactor, type Redactor } from "../../redact.js";
import type { AgentEvent } from "../../loop/types.js";
import { zeroUsage } from "../../tools/usage.js";
import { McpRequiredError } from "../../mcp/required-error.js";
import type { ServerIdentity, StdioWire } from "../../mcp/serve/stdio-wire.js";
import type { SdkModule } from "../../mcp/serve/server.js";
import { reportUsageError } from "../errors.js";
import { UsageError } from "../../errors.js";
import { createCallSink, type EventsMode } from "../events/sink.js";
import { EXIT, exitCodeForError, exitCodeForSignal } from "../exit-codes.js";
import type { CliIo } from "../io.js";
import { packageVersion } from "../../package-info.js";
import { strictLoadError } from "../preflight.js";
import { installSignalHandlers } from "../signals.js";
import { callCacheScope, findLoadProblems, loadProblemMessage, loadRegistry, loadSpecFromArgv, withMcp } from "../setup.js";
import { composePrompt } from "../stdin.js";

/** How long calls in flight get to end after the stop (their signals are aborted first). */
const STOP_GRACE_MS = 5_000;

/** What ./mcp-serve.ts started before this module loaded. */
export interface ServeStart {
  /** The stdio channel (absent with --http). */
  wire?: StdioWire;
  identity: ServerIdentity;
  sdkLoading: Promise<SdkModule>;
}

export async function serveSession(argv: Record<string, unknown>, io: CliIo, { wire, identity, sdkLoading }: ServeStart): Promise<number> {
  const mode: EventsMode = argv.events === "none" || argv.events === "github" ? argv.events : "ndjson";
  const sink = createCallSink(io, mode);
  const runId = randomUuid();
  let redact: Redactor = createRedactor(secretValues(io.env));
  const emitEvent = (event: AgentEvent) => sink.emit(redact(event));
  // The session is one run on stderr: its frame alone stamps events and builds agentStart/agentEnd.
  const frame = createRunFrame({ runId, sink: emitEvent });
  const emit: Emit = frame.emit;
  const started = performance.now();
  const stdio = wire !== undefined;

  const held: string[] = [];
  let warn = (message: string): void => void held.push(message);
  guardChannels({
    onOutput: ({ stream, text }) => warn(`tool or hook code wrote to ${stream}: ${text}`),
    onUncaught: (error, kind) => warn(`tool or hook code ${kind === "exception" ? "threw outside its call" : "left a promise rejection unhandled"}: ${messageOf(error)}`),
  });
  const signals = installSignalHandlers(io);
  let killChildren = () => {};
  signals.beforeForcedExit(() => killChildren());
  let closeMcp = async () => {};
  let startedServing = false;
  try {
    const http = argv.http === undefined ? undefined : await httpSettings(argv, io.env);
    const spec = await loadSpecFromArgv(argv, io, argv.agent !== undefined);
    redact = createRedactor(secretValues(io.env, [spec.model.apiKey, http?.token]));
    const processes = await import("../../tools/process.js");
    addSecretEnvNames(spec.model.apiKeyEnv, ...(http?.tokenEnv ? [http.tokenEnv] : []));
    killChildren = () => void processes.killAllChildren();
    const [loaded, hooks, { createToolPolicy }] = await Promise.all([
      loadRegistry(spec, callCacheScope(io)).then((l) => withMcp(l, spec, packageVersion(), signals.controller.signal)),
      import("../../hooks/index.js").then((m) => m.loadSpecHooks(spec.hooks, { cwd: spec.baseDir, cache: callCacheScope(io), env: io.env })),
      import("../../tools/policy.js"),
    ]);
    const mcp = loaded.mcp;
    if (mcp) closeMcp = () => mcp.close();
    const problems = await findLoadProblems(spec, loaded);
    const strictError = strictLoadError(spec, problems, io.cwd);
    if (strictError) throw strictError;
    const policy = createToolPolicy(spec.tools.allow, spec.tools.deny);
    loaded.registry.applyPolicy(policy);
    const agentTool = argv.agent === undefined ? undefined : await agentToolFor(argv, io, spec, loaded.registry, policy, hooks, emitEvent);

    const [{ createServeSession }, sdk] = await Promise.all([import("../../mcp/serve/session.js"), sdkLoading]);
    const session = createServeSession({
      runId,
      registry: loaded.registry,
      isToolAllowed: policy,
      hooks,
      toolTimeoutMs: spec.limits.toolTimeoutMs,
      emit,
      signal: signals.controller.signal,
      ...(agentTool ? { agentTool } : {}),
    });
    const { createServerFactory } = await import("../../mcp/serve/server.js");
    const sdkWarning = (error: Error) => warn(`mcp serve: ${messageOf(error)}`);
    const factory = createServerFactory(sdk, identity, session, sdkWarning);

    let url: string | undefined;
    let closeTransport: () => Promise<void>;
    const stopped = new Promise<"stdin" | "signal">((resolve) => {
      if (signals.controller.signal.aborted) resolve("signal");
      else signals.controller.signal.addEventListener("abort", () => resolve("signal"), { once: true });
      wire?.onEnd(() => resolve("stdin"));
    });
    if (wire) {
      const { serveStdio } = await import("@modelcontextprotocol/server/stdio");
      const served = serveStdio(() => factory.create(), { transport: wire as never, onerror: sdkWarning });
      closeTransport = () => served.close();
    } else {
      const { listenHttp } = await import("../../mcp/serve/http.js");
      const handler = sdk.createMcpHandler(() => factory.create(), { legacy: "stateless", onerror: sdkWarning });
      session.onToolsChanged(() => handler.notify.toolsChanged());
      const listener = await listenHttp(sdk, handler, { ...http!, onError: sdkWarning });
      url = listener.url;
      closeTransport = async () => {
        await listener.close();
        await handler.close();
      };
    }
    session.onToolsChanged(() => factory.toolsChanged());

    frame.start({
      yiemVersion: packageVersion(),
      model: agentTool ? spec.model.name : "none",
      tools: session.list().map((t) => t.name),
      toolExecution: spec.toolExecution,
      configPath: spec.configPath,
      ...(mcp ? { mcpServers: mcp.servers } : {}),
      serve: { transport: stdio ? "stdio" : "http", ...(url ? { url } : {}), ...(agentTool ? { agentTool: agentTool.name } : {}) },
    });
    startedServing = true;
    for (const p of problems) emit({ type: "warning", message: loadProblemMessage(p), ...(p.path ? { path: p.path } : {}) });
    for (const body of mcp?.startEvents ?? []) emit(body);
    mcp?.attach((body) => {
      emit(body);
      if (body.type === "mcpToolsChanged") session.checkToolsChanged();
    });
    warn = mode === "none" ? (message) => reportUsageError(io, redact(message)) : (message) => emit({ type: "warning", message });
    for (const message of held.splice(0)) warn(message);

    const why = await stopped;
    // The calls in flight: their signals are aborted (the server's on a signal; the SDK aborts
    // each request when stdin ends), then they get STOP_GRACE_MS to end.
    await Promise.race([session.idle(), new Promise((r) => setTimeout(r, STOP_GRACE_MS).unref())]);
    await closeTransport().catch(() => {});
    await factory.closeAll();
    await processes.terminateAllChildren(processes.killGraceMs(io.env));
    warn = () => {};
    const code = why === "signal" ? exitCodeForSignal(signals.received) : EXIT.ok;
    frame.end({
      stopReason: why === "signal" ? "aborted" : "completed",
      turns: 0,
      toolCalls: session.totals.calls,
      usage: { ...session.totals.usage },
      durationMs: Math.round(performance.now() - started),
      ...(why === "signal" ? { error: `mcp serve ended by ${signals.received ?? "a signal"}` } : {}),
    });
    return code;
  } catch (error) {
    warn = () => {};
    const message = redact(messageOf(error));
    if (mode === "none") reportUsageError(io, message);
    else {
      for (const body of error instanceof McpRequiredError ? error.events : []) emit(body);
      frame.end({ stopReason: "error", turns: 0, toolCalls: 0, usage: zeroUsage(), durationMs: Math.round(performance.now() - started), error: message });
    }
    if (argv.debug && error instanceof Error && error.stack) reportUsageError(io, redact(error.stack));
    return startedServing ? EXIT.failure : exitCodeForError(error);
  } finally {
    await closeMcp().catch(() => {});
    await sink.close();
  }
}

interface HttpSettings {
  host: string;
  port: number;
  token?: string;
  tokenEnv?: string;
  allowOrigins: string[];
}

/** `--http`, `--token-env` and `--allow-origin`, checked: off loopback a token is required. */
async function httpSettings(argv: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<HttpSettings> {
  const { parseListenAddress, isLoopbackHost } = await import("../../mcp/serve/http.js");
  let address: { host: string; port: number };
  try {
    address = parseListenAddress(String(argv.http));
  } catch (error) {
    throw new UsageError(messageOf(error));
  }
  const tokenEnv = argv["token-env"] === undefined ? undefined : String(argv["token-env"]);
  const token = tokenEnv === undefined ? undefined : env[tokenEnv];
  if (tokenEnv !== undefined && !token) throw new UsageError(`--token-env ${tokenEnv}: the variable ${tokenEnv} is not set (or empty)`);
  if (!token && !isLoopbackHost(address.host)) {
    throw new UsageError(`--http ${String(argv.http)} binds ${address.host}, which is not loopback: give a bearer token with --token-env NAME`);
  }
  const origins = argv["allow-origin"] === undefined ? [] : ([] as unknown[]).concat(argv["allow-origin"]).map(String);
  return { ...address, ...(token ? { token, tokenEnv } : {}), allowOrigins: origins };
}

/** The `--agent [NAME]` tool; its name must follow the tool-name rule and be free. */
async function agentToolFor(
  argv: Record<string, unknown>,
  io: CliIo,
  spec: ResolvedSpec,
  registry: import("../../tools/registry.js").ToolRegistry,
  policy: (name: string) => boolean,
  hooks: import("../../loop/types.js").AgentHooks,
  onEvent: (event: AgentEvent) => void,
) {
  const [{ createAgentTool, DEFAULT_AGENT_TOOL_NAME }, { TOOL_NAME_PATTERN }, { withRedactedDeltas }, { providerFor }] = await Promise.all([
    import("../../mcp/serve/agent-tool.js"),
    import("../../tools/define.js"),
    import("../../provider/redacting.js"),
    import("../provider-for.js"),
  ]);
  const name = String(argv.agent) || DEFAULT_AGENT_TOOL_NAME;
  if (!TOOL_NAME_PATTERN.test(name)) throw new UsageError(`--agent ${JSON.stringify(name)}: a tool name is a letter, then letters, digits, _ or - (64 at most)`);
  if (registry.has(name)) throw new UsageError(`--agent ${name}: the spec already has a tool named ${name}; name the agent tool differently (--agent NAME)`);
  const secrets = secretValues(io.env, [spec.model.apiKey]);
  return createAgentTool({
    name,
    spec,
    registry,
    isToolAllowed: policy,
    hooks,
    newProvider: async () => withRedactedDeltas(await providerFor(spec, io.env), secrets),
    messagesFor: (prompt, stdin) => [
      ...(spec.systemPrompt ? [{ role: "system" as const, content: spec.systemPrompt }] : []),
      { role: "user" as const, content: composePrompt([prompt], stdin) },
    ],
    onEvent,
    yiemVersion: packageVersion(),
  });
}
