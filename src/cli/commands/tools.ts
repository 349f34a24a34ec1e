/**
 * `yiem tools list|new|show|call|check`. Every subcommand works without a spec file and without
 * a model. stdout carries only the command's output (through cli/output.ts); notes and load
 * problems go to stderr through the event sink. Exit codes: 0 ok, 1 failure (`check` found a
 * problem; `call` returned an error result), 2 usage (bad flags, unknown tool, invalid input).
 */
import type { ToolInfo } from "../../tools/types.js";
import { createCallSink } from "../events/sink.js";
import type { CliIo } from "../io.js";
import { UsageError } from "../../errors.js";
import { EXIT } from "../exit-codes.js";
import { printJson, printText } from "../output.js";
import { findLoadProblems } from "../setup.js";
import { formatTable, oneLine } from "../table.js";
import { commandRedactor, loadToolsRegistry, loadToolsSpec, newEmitter, reportCommandError, shownPath, unknownTool, warnProblems } from "./tools-context.js";

export async function handler(argv: Record<string, unknown>, io: CliIo): Promise<number> {
  const sub = String((argv._ as unknown[] | undefined)?.[1] ?? "");
  try {
    switch (sub) {
      case "list":
        return await listCommand(argv, io);
      case "show":
        return await showCommand(argv, io);
      case "check":
        return await checkCommand(argv, io);
      case "new":
        return await (await import("./tools-new.js")).newCommand(argv, io);
      case "call":
        return await (await import("./tools-call.js")).callCommand(argv, io);
      default:
        throw new UsageError(`unknown tools command "${sub}": use list, new, show, call or check`);
    }
  } catch (error) {
    return reportCommandError(error, Boolean(argv.debug), io);
  }
}

/** `tools list [--json]`: a table on a TTY, tab-separated lines when piped; load problems as warnings. */
async function listCommand(argv: Record<string, unknown>, io: CliIo): Promise<number> {
  const spec = await loadToolsSpec(argv, io);
  const { registry, problems, mcp } = await loadToolsRegistry(spec, io, { mcp: true });
  await mcp?.close();
  const sink = createCallSink(io);
  const emit = newEmitter(sink, io);
  warnProblems(emit, problems);
  // Optional MCP servers that failed: their errors, as a run would report them.
  for (const event of mcp?.startEvents ?? []) if (event.type !== "mcpServerReady") emit(event);
  await sink.close();
  const infos = registry.infos();
  if (argv.json) {
    await printJson(commandRedactor(io)({ tools: infos.map(infoJson), problems }), io.stdout);
    return EXIT.ok;
  }
  const sourceOf = (t: ToolInfo) => (t.source.kind === "builtin" ? "builtin" : t.source.kind === "mcp" ? `mcp:${t.source.server}` : shownPath(t.source.path, io.cwd));
  const rows = infos.map((t) => [t.name, t.label, sourceOf(t), t.description].map((cell) => oneLine(commandRedactor(io)(cell))));
  if (io.isTTY.stdout) await printText(formatTable(["NAME", "LABEL", "SOURCE", "DESCRIPTION"], rows, io.stdout.columns || 100), io.stdout);
  else await printText(rows.map((r) => r.join("\t")).join("\n"), io.stdout);
  return EXIT.ok;
}

/** `tools show <name>`: the definition as JSON. */
async function showCommand(argv: Record<string, unknown>, io: CliIo): Promise<number> {
  const name = String(argv.name);
  const spec = await loadToolsSpec(argv, io);
  const { registry, problems, mcp } = await loadToolsRegistry(spec, io, { mcp: name.startsWith("mcp__") });
  await mcp?.close();
  const info = registry.infos().find((t) => t.name === name);
  if (!info) throw unknownTool(name, registry.list().map((t) => t.name), problems.length);
  const json = infoJson(info);
  const timeoutMs = registry.get(name)?.timeoutMs;
  await printJson(commandRedactor(io)(timeoutMs === undefined ? json : { ...json, timeoutMs }), io.stdout);
  return EXIT.ok;
}

/**
 * `tools check`: loads every tool (which checks every schema) and reports every load problem
 * `yiem run --strict` would stop on (../setup.ts `findLoadProblems`: also programs that cannot
 * start and tool globs that match nothing), `file: reason` on stdout; exit 1 on any.
 */
async function checkCommand(argv: Record<string, unknown>, io: CliIo): Promise<number> {
  const spec = await loadToolsSpec(argv, io);
  const { rejectOnDrain, DRAINED_HINT } = await import("../host/drain.js");
  const loaded = await rejectOnDrain(loadToolsRegistry(spec, io), () => new Error(`loading the tools did not finish: ${DRAINED_HINT}`), io.host);
  const all = await findLoadProblems(spec, loaded);
  const count = loaded.registry.list().length;
  const folders = spec.toolDirs.length === 0 ? "no tool folder" : spec.toolDirs.map((dir) => shownPath(dir, io.cwd)).join(", ");
  const lines = all.map((p) => (p.path ? `${shownPath(p.path, io.cwd)}: ${p.reason}` : p.reason));
  lines.push(
    all.length === 0
      ? `ok: ${count} tool${count === 1 ? "" : "s"} loaded from ${folders}, no problems`
      : `${all.length} problem${all.length === 1 ? "" : "s"} (${count} tool${count === 1 ? "" : "s"} loaded from ${folders})`,
  );
  await printText(commandRedactor(io)(lines.join("\n")), io.stdout);
  return all.length === 0 ? EXIT.ok : EXIT.failure;
}

function infoJson(info: ToolInfo) {
  return {
    name: info.name,
    label: info.label,
    description: info.description,
    inputSchema: info.inputSchema,
    parallelToolExecute: info.parallelToolExecute,
    source: info.source,
  };
}
