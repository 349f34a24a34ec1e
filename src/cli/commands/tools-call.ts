/**
 * `yiem tools call <name> [--args JSON|@file|-]`: prepare, validate and execute one tool without a
 * model (no hooks, no policy). Events on stderr per `--events` (toolCallRejected, or
 * toolExecutionStart/Update/End); the result on stdout: its text, or with `--output json` one line
 * `{content, details, isError}`. Exit 0 ok, 1 error result, 2 unknown tool or invalid arguments,
 * 130/143 interrupted.
 */
import { randomBytes } from "node:crypto";
import { executeToolCall } from "../../loop/execute.js";
import { prepareArguments } from "../../loop/prepare.js";
import type { ContentPart } from "../../tools/types.js";
import { reportUsageError } from "../errors.js";
import { createEventSink, defaultEventsMode, type EventsMode } from "../events/sink.js";
import { EXIT } from "../exit-codes.js";
import { printJson, printText } from "../output.js";
import { installSignalHandlers } from "../signals.js";
import { loadToolsRegistry, loadToolsSpec, newEmitter, readFlagValue, unknownTool, warnProblems } from "./tools-context.js";

export async function callCommand(argv: Record<string, unknown>): Promise<number> {
  const name = String(argv.name ?? "");
  const raw = argv.args === undefined ? "{}" : await readFlagValue("args", String(argv.args), { allowStdin: true });
  const spec = await loadToolsSpec(argv);
  const { registry, problems } = await loadToolsRegistry(spec);
  const mode = (argv.events as EventsMode | undefined) ?? defaultEventsMode();
  const sink = createEventSink({ mode });
  const emit = newEmitter(sink);
  const toolCall = { id: `call_${randomBytes(6).toString("hex")}`, name, arguments: raw };
  const reject = async (reason: string, args: unknown) => {
    emit({ type: "toolCallRejected", turn: 1, toolCallId: toolCall.id, toolName: name, args, reason });
    await sink.close();
    if (mode === "none") reportUsageError(reason);
    return EXIT.usage;
  };
  try {
    warnProblems(emit, problems);
    const tool = registry.get(name);
    if (!tool) return await reject(unknownTool(name, registry.list().map((t) => t.name), problems.length).message, raw);
    const prepared = await prepareArguments(tool, raw);
    if (!prepared.ok) return await reject(prepared.reason, prepared.args);

    const signals = installSignalHandlers();
    // Handlers stay installed until exit, so a signal during the flush still exits 130/143.
    const finished = await executeToolCall(
      { toolCall, tool, args: prepared.args },
      { turn: 1, signal: signals.controller.signal, hooks: {}, emit, toolTimeoutMs: spec.limits.toolTimeoutMs },
    );
    await sink.close();
    const { result, isError } = finished;
    if (argv.output === "json") {
      await printJson({ content: result.content, details: result.details ?? null, isError }, process.stdout, { indent: 0 });
    } else {
      await printText(contentText(result.content));
    }
    if (signals.received) return signals.received === "SIGTERM" ? EXIT.sigterm : EXIT.sigint;
    return isError ? EXIT.failure : EXIT.ok;
  } finally {
    await sink.close();
  }
}

/** Text parts joined by newlines; an image part as a short placeholder. */
export function contentText(content: ContentPart[]): string {
  return content
    .map((part) => (part.type === "text" ? part.text : `[image ${part.mimeType}, ${Math.floor((part.data.length * 3) / 4)} bytes]`))
    .join("\n");
}
