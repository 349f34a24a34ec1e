/**
 * `yiem mcp list [--json]`: a preflight of the MCP servers (spec `mcpServers` and `--mcp-config`
 * files). Every server connects in parallel; each one's status, protocol version, server info
 * and tools (yiem names, after its allow/deny) are printed on stdout, then every server is
 * closed. Exit 0 when every required server is ready, 1 when one is not, 2 on a spec error
 * (a bad entry, a stdio command that is not found). No model is needed.
 */
import { secretValues } from "../../secrets.js";
import { createRedactor } from "../../redact.js";
import { UsageError } from "../../errors.js";
import { EXIT } from "../exit-codes.js";
import { packageVersion } from "../../package-info.js";
import { printJson, printText } from "../output.js";
import { loadSpecFromArgv } from "../setup.js";
import { reportCommandError } from "./tools-context.js";
import type { CliIo } from "../io.js";

interface ServerReport {
  name: string;
  transport: "stdio" | "http";
  required: boolean;
  status: "ready" | "failed";
  definedIn: string | null;
  protocolVersion?: string;
  serverInfo?: { name: string; version: string; title?: string };
  durationMs?: number;
  tools?: Array<{ name: string; tool: string; description: string }>;
  error?: { phase: string; message: string; stderrTail: string };
}

export async function handler(argv: Record<string, unknown>, io: CliIo): Promise<number> {
  const sub = String((argv._ as unknown[] | undefined)?.[1] ?? "");
  try {
    if (sub !== "list") throw new UsageError(`unknown mcp command "${sub}": use list or serve`);
    return await listCommand(argv, io);
  } catch (error) {
    return reportCommandError(error, Boolean(argv.debug), io);
  }
}

async function listCommand(argv: Record<string, unknown>, io: CliIo): Promise<number> {
  const spec = await loadSpecFromArgv(argv, io, false);
  const redact = createRedactor(secretValues(io.env, [spec.model.apiKey]));
  if (spec.mcpServers.length === 0) {
    if (argv.json) await printJson({ servers: [] }, io.stdout);
    else await printText("no MCP servers (add mcpServers to the spec, or give --mcp-config FILE)", io.stdout);
    return EXIT.ok;
  }
  const [{ connectServer, McpStartError }, { nameMcpTools }, { createToolPolicy }, { ConfigError }] = await Promise.all([
    import("../../mcp/connection.js"),
    import("../../mcp/names.js"),
    import("../../tools/policy.js"),
    import("../../config/errors.js"),
  ]);
  const settled = await Promise.allSettled(spec.mcpServers.map((server) => connectServer(server, packageVersion(), undefined, io.env)));
  const connections = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  try {
    const configError = settled.find((s) => s.status === "rejected" && s.reason instanceof ConfigError);
    if (configError) throw (configError as PromiseRejectedResult).reason;
    const allTools = connections.flatMap((c) => {
      const allows = createToolPolicy(c.server.tools.allow, c.server.tools.deny);
      return c.tools.filter((t) => allows(t.name)).map((t) => ({ server: c.server.name, rawName: t.name, description: t.description ?? "" }));
    });
    const { named } = nameMcpTools(allTools);
    const reports: ServerReport[] = spec.mcpServers.map((server, index) => {
      const base = { name: server.name, transport: server.transport, required: server.required, definedIn: server.definedIn };
      const outcome = settled[index];
      if (outcome.status === "rejected") {
        const reason = outcome.reason;
        const error = reason instanceof McpStartError
          ? { phase: reason.phase, message: reason.reason, stderrTail: reason.stderrTail }
          : { phase: server.transport === "stdio" ? "spawn" : "connect", message: (reason as Error)?.message ?? String(reason), stderrTail: "" };
        return { ...base, status: "failed", error };
      }
      const c = outcome.value;
      const tools = named
        .map((n, i) => ({ ...n, description: allTools[i].description }))
        .filter((n) => n.server === server.name)
        .map((n) => ({ name: n.name, tool: n.rawName, description: n.description }));
      return { ...base, status: "ready", protocolVersion: c.protocolVersion, serverInfo: c.serverInfo, durationMs: c.durationMs, tools };
    });
    if (argv.json) await printJson(redact({ servers: reports }), io.stdout);
    else await printText(redact(formatReports(reports)), io.stdout);
    return reports.some((r) => r.required && r.status === "failed") ? EXIT.failure : EXIT.ok;
  } finally {
    await Promise.all(connections.map((c) => c.close()));
  }
}

function formatReports(reports: ServerReport[]): string {
  const lines: string[] = [];
  for (const r of reports) {
    const need = r.required ? "required" : "optional";
    if (r.status === "ready") {
      const info = r.serverInfo ? `${r.serverInfo.name} ${r.serverInfo.version}` : "";
      lines.push(`${r.name}: ready (${r.transport}, ${need}) protocol ${r.protocolVersion}, ${info}, ${r.tools!.length} tool${r.tools!.length === 1 ? "" : "s"}, ${r.durationMs} ms`);
      for (const t of r.tools!) lines.push(`  ${t.name}\t${t.description.replace(/\s+/g, " ").trim()}`);
    } else {
      lines.push(`${r.name}: FAILED (${r.transport}, ${need}) in ${r.error!.phase}: ${r.error!.message}`);
      for (const line of r.error!.stderrTail.split("\n").filter(Boolean)) lines.push(`  stderr: ${line}`);
    }
  }
  return lines.join("\n");
}
