/**
 * One MCP server connection: start (spawn or HTTP connect, handshake, tools/list) within
 * `startupTimeoutMs`, calls, tools/list_changed refreshes, close. Rules:
 * - every failure to start is an McpStartError naming the server, the phase and, for stdio, the
 *   last lines of its stderr; a stdio command that is not found is a ConfigError (exit 2);
 * - a call always passes its timeout to the SDK (never the SDK's 60 s default) as an absolute
 *   cap (progress does not extend it); an aborted or timed-out call is cancelled through the
 *   protocol (`notifications/cancelled`, sent by the SDK when its signal aborts);
 * - `notifications/tools/list_changed` starts a refresh at once; a call's result is handed back
 *   only after a refresh it raced with has finished, so a tool added by a call is on offer from
 *   the very next turn.
 */
import { access, constants } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult, Client, Tool as McpToolDef } from "@modelcontextprotocol/client";
import { ConfigError } from "../config/errors.js";
import type { ResolvedMcpServer } from "../config/types.js";
import { childEnv, killGraceMs } from "../tools/process.js";
import { ProcessGroupStdioTransport } from "./stdio-transport.js";

export type McpPhase = "spawn" | "connect" | "handshake" | "listTools" | "runtime";

/** A server that did not become ready. */
export class McpStartError extends Error {
  constructor(
    readonly server: string,
    readonly phase: McpPhase,
    readonly reason: string,
    readonly stderrTail: string,
  ) {
    super(`MCP server "${server}" failed (${phase}): ${reason}${stderrTail ? `; its stderr ended with:\n${stderrTail}` : ""}`);
    this.name = "McpStartError";
  }
}

/** The largest timeout a timer takes: what "no timeout" (0) becomes, since the SDK needs one. */
const MAX_TIMEOUT_MS = 2_147_483_647;

export interface McpCallOptions {
  signal: AbortSignal;
  /** The tool as listed: the SDK checks the result against its outputSchema. */
  definition?: McpToolDef;
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

export interface McpConnection {
  readonly server: ResolvedMcpServer;
  readonly protocolVersion: string;
  readonly serverInfo: { name: string; version: string; title?: string };
  readonly durationMs: number;
  /** The server's tools as last listed. */
  tools: McpToolDef[];
  /** Called after each tools/list_changed refresh with the new list. */
  onToolsChanged?: (tools: McpToolDef[], error?: Error) => void;
  /** Called once when the connection ends without `close()`: the server exited or broke the protocol. */
  onLost?: (reason: string) => void;
  callTool(name: string, args: Record<string, unknown>, options: McpCallOptions): Promise<CallToolResult>;
  stderrTail(): string;
  close(): Promise<void>;
}

/**
 * Connects `server` or throws McpStartError / ConfigError; `signal` aborts the start. A stdio
 * server's parent environment is `parentEnv` (the CLI's io.env; the process's own only for a
 * library caller that gives none), its kill grace period that env's (../tools/process.ts).
 */
export async function connectServer(server: ResolvedMcpServer, clientVersion: string, signal?: AbortSignal, parentEnv: NodeJS.ProcessEnv = process.env): Promise<McpConnection> {
  const started = performance.now();
  let stdio: ProcessGroupStdioTransport | undefined;
  let client: Client | undefined;
  let phase: McpPhase = server.transport === "stdio" ? "spawn" : "connect";
  const deadline = Date.now() + server.startupTimeoutMs;
  const remaining = () => Math.max(1, deadline - Date.now());
  const tail = () => stdio?.stderrTail() ?? "";
  const fail = (error: unknown): McpStartError => {
    const reason = describeStartFailure(error, { server, phase, stdio, startupTimeoutMs: server.startupTimeoutMs });
    return new McpStartError(server.name, phase, reason, tail());
  };
  if (server.transport === "stdio") {
    const env = childEnv(server.env ?? {}, parentEnv);
    await checkProgram(server, env);
    stdio = new ProcessGroupStdioTransport({ command: server.command!, cwd: server.cwd!, env, killGraceMs: killGraceMs(parentEnv) });
  }
  let tools: McpToolDef[];
  try {
    // The server starts while the SDK loads (a few hundred ms either way); started here rather
    // than by connect(), so a spawn failure is told apart from the handshake.
    const [sdk] = await Promise.all([import("@modelcontextprotocol/client"), stdio?.start()]);
    if (stdio) phase = "handshake";
    const transport = stdio ?? new sdk.StreamableHTTPClientTransport(new URL(server.url!), { requestInit: { headers: server.headers ?? {} } });
    client = new sdk.Client({ name: "yiem", version: clientVersion }, { capabilities: {} });
    if (stdio?.protocolError) throw stdio.protocolError;
    await client.connect(transport, { timeout: remaining(), signal });
    phase = "listTools";
    tools = (await client.listTools(undefined, { timeout: remaining(), signal, cacheMode: "bypass" })).tools;
  } catch (error) {
    const failure = fail(stdio?.protocolError ?? error);
    await closeQuietly(client, stdio);
    throw failure;
  }
  const connected: Client = client;
  const serverVersion = connected.getServerVersion();
  let refreshing: Promise<void> | null = null;
  let again = false;
  const connection: McpConnection = {
    server,
    protocolVersion: connected.getNegotiatedProtocolVersion() ?? "unknown",
    serverInfo: {
      name: serverVersion?.name ?? "unknown",
      version: serverVersion?.version ?? "unknown",
      ...(serverVersion?.title ? { title: serverVersion.title } : {}),
    },
    durationMs: Math.round(performance.now() - started),
    tools,
    async callTool(name, args, options) {
      const timeout = server.toolTimeoutMs > 0 ? Math.min(server.toolTimeoutMs, MAX_TIMEOUT_MS) : MAX_TIMEOUT_MS;
      try {
        return (await connected.callTool(
          { name, arguments: args },
          {
            signal: options.signal,
            timeout,
            maxTotalTimeout: timeout,
            resetTimeoutOnProgress: false,
            ...(options.definition ? { toolDefinition: options.definition } : {}),
            ...(options.onProgress ? { onprogress: options.onProgress } : {}),
          },
        )) as CallToolResult;
      } catch (error) {
        if (stdio?.protocolError) throw stdio.protocolError;
        if (stdio?.end && !options.signal.aborted) throw new Error(`the server exited during the call (${exitText(stdio.end)})${tail() ? `; its stderr ended with:\n${tail()}` : ""}`);
        throw error;
      } finally {
        if (refreshing) await refreshing.catch(() => {});
      }
    },
    stderrTail: tail,
    close: () => {
      closing = true;
      return closeQuietly(connected, stdio);
    },
  };
  let closing = false;
  connected.onclose = () => {
    if (closing) return;
    closing = true;
    const why = stdio?.protocolError?.message ?? (stdio?.end ? `the server exited (${exitText(stdio.end)})` : "the connection closed");
    connection.onLost?.(why);
    void closeQuietly(connected, stdio);
  };
  const refresh = (): void => {
    if (refreshing) {
      again = true;
      return;
    }
    refreshing = (async () => {
      do {
        again = false;
        try {
          const listed = await connected.listTools(undefined, { timeout: Math.min(server.startupTimeoutMs, MAX_TIMEOUT_MS), cacheMode: "bypass" });
          connection.tools = listed.tools;
          connection.onToolsChanged?.(listed.tools);
        } catch (error) {
          connection.onToolsChanged?.(connection.tools, error instanceof Error ? error : new Error(String(error)));
        }
      } while (again);
    })().finally(() => {
      refreshing = null;
    });
  };
  connected.setNotificationHandler("notifications/tools/list_changed", () => refresh());
  return connection;
}

async function closeQuietly(client: Client | undefined, stdio: ProcessGroupStdioTransport | undefined): Promise<void> {
  try {
    await client?.close();
  } catch {
    // closing anyway
  }
  // The client closes the transport; this makes sure the group is ended even if it did not.
  if (stdio) await stdio.close().catch(() => {});
}

/**
 * A stdio program that is not there is a spec error (exit 2), told before anything starts; a
 * program path that exists but cannot be run fails at spawn (exit 1 for a required server).
 */
async function checkProgram(server: ResolvedMcpServer, env: Record<string, string>): Promise<void> {
  const program = server.command![0];
  const where = `mcpServers.${server.name}.command`;
  const executable = (file: string) => access(file, constants.X_OK).then(() => true, () => false);
  if (program.includes("/")) {
    const file = path.resolve(server.cwd!, program);
    if (!(await access(file, constants.F_OK).then(() => true, () => false))) throw new ConfigError(`${where}: "${program}" not found (${file})`, { key: where });
    return;
  }
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (dir && (await executable(path.join(dir, program)))) return;
  }
  throw new ConfigError(`${where}: command "${program}" not found on PATH`, { key: where });
}

function exitText(end: { exitCode: number | null; signal: string | null }): string {
  return end.signal ? `killed by ${end.signal}` : `exit code ${end.exitCode}`;
}

/** The words for why a start failed, by what is known: exit, protocol error, HTTP status, timeout. */
function describeStartFailure(
  error: unknown,
  ctx: { server: ResolvedMcpServer; phase: McpPhase; stdio: ProcessGroupStdioTransport | undefined; startupTimeoutMs: number },
): string {
  const e = error as { code?: unknown; status?: number; statusText?: string; message?: string; cause?: { code?: string; message?: string } };
  const message = e?.message ?? String(error);
  if (ctx.stdio?.protocolError && error === ctx.stdio.protocolError) return message;
  if (ctx.phase === "spawn" && ctx.stdio) return message;
  if (ctx.stdio?.end) return `the server exited during start (${exitText(ctx.stdio.end)})`;
  if (e?.code === "REQUEST_TIMEOUT" || /timed? ?out/i.test(message)) {
    const what = ctx.phase === "listTools" ? "did not list its tools" : "did not answer the handshake";
    return `${what} within ${ctx.startupTimeoutMs} ms (startupTimeoutMs)`;
  }
  if (typeof e?.status === "number" && e.status > 0) {
    const hint = e.status === 401 || e.status === 403 ? " (check the server's headers, e.g. Authorization)" : "";
    return `HTTP ${e.status}${e.statusText ? ` ${e.statusText}` : ""} from ${ctx.server.url}${hint}`;
  }
  if (e?.cause?.code) return `cannot reach ${ctx.server.url}: ${e.cause.code}`;
  return message;
}
