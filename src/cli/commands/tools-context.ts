/**
 * What every `yiem tools …` command shares: the spec (no model needed, no spec file needed), the
 * tool folders (`--tool-dir`, else the spec's, else `tools/` beside the spec or in the current
 * folder when it exists; resolved by the config loader), the registry, reading `JSON|@file|-` values, and error
 * reports (exit codes by the error's kind: ../exit-codes.ts `exitCodeForError`).
 */
import { randomUuid } from "../../random-id.js";
import { relative, isAbsolute, sep } from "node:path";
import { guardChannels } from "../../channels/guard.js";
import { secretValues } from "../../secrets.js";
import type { ResolvedSpec } from "../../config/types.js";
import { messageOf } from "../../error-text.js";
import { createRedactor, type Redactor } from "../../redact.js";
import type { Emit } from "../../loop/events.js";
import { createRunFrame } from "../../loop/run-frame.js";
import { reportUsageError } from "../errors.js";
import { UsageError } from "../../errors.js";
import { EXIT, exitCodeForError } from "../exit-codes.js";
import type { CliIo } from "../io.js";
import { callCacheScope, loadRegistry, loadSpecFromArgv, withMcp, type LoadedTools } from "../setup.js";
import { packageVersion } from "../../package-info.js";
import type { CliEventSink } from "../events/sink.js";

/** Each call's redactor (one per io, so calls in one process never share one). */
const redactors = new WeakMap<CliIo, Redactor>();

/**
 * What every tools command passes its output and messages through: secrets hidden as in `yiem
 * run` (the call's environment's secret values, and the API key once the spec is read).
 */
export function commandRedactor(io: CliIo): Redactor {
  let redactor = redactors.get(io);
  if (!redactor) {
    redactor = createRedactor(secretValues(io.env));
    redactors.set(io, redactor);
  }
  return redactor;
}

/** The resolved spec; no model is needed (toolDirs default to `tools/` beside the spec, see config/resolve.ts). */
export async function loadToolsSpec(argv: Record<string, unknown>, io: CliIo): Promise<ResolvedSpec> {
  const spec = await loadSpecFromArgv(argv, io, false);
  redactors.set(io, createRedactor(secretValues(io.env, [spec.model.apiKey])));
  return spec;
}

/**
 * The registry, with the channel guard installed before any tool code loads
 * (../../channels/guard.ts): tool code's console output and writes go to stderr as
 * `yiem: tool or hook code wrote to …` lines, redacted (`tools call` installs its own first, for
 * events); a throw or rejection nobody handled ends the command with exit 1. With `mcp`, the spec's
 * MCP servers are connected and their tools added (close `mcp` when done).
 */
export async function loadToolsRegistry(spec: ResolvedSpec, io: CliIo, options: { mcp?: boolean } = {}): Promise<LoadedTools> {
  guardChannels({
    onOutput: ({ stream, text }) => reportUsageError(io, commandRedactor(io)(`tool or hook code wrote to ${stream}: ${text}`)),
    onUncaught: (error) => {
      reportUsageError(io, commandRedactor(io)(`tool or hook code failed outside its call: ${messageOf(error)}`));
      io.host.exitNow(EXIT.failure);
    },
  });
  const loaded = await loadRegistry(spec, callCacheScope(io));
  return options.mcp ? withMcp(loaded, spec, packageVersion()) : loaded;
}

/** The usage error for a tool name that is not loaded. */
export function unknownTool(name: string, known: string[], problemCount: number): UsageError {
  const hint = problemCount > 0 ? ` (${problemCount} tool file${problemCount === 1 ? "" : "s"} failed to load: see yiem tools check)` : "";
  return new UsageError(`unknown tool "${name}"; available: ${known.join(", ") || "(none)"}${hint}`);
}

/** Emits one `warning` event per tool file that failed to load. */
export function warnProblems(emit: Emit, problems: LoadedTools["problems"]): void {
  for (const p of problems) emit({ type: "warning", message: `tool not loaded: ${p.reason}`, path: p.path });
}

/**
 * The emitter of a tools command's events (warnings), in a run frame of its own. The frame, and
 * its runId, are made at the first event: a command that emits none (a clean `tools list`)
 * never loads node:crypto for the id.
 */
export function newEmitter(sink: CliEventSink, io: CliIo): Emit {
  let emit: Emit | undefined;
  return (event) => {
    emit ??= createRunFrame({ runId: randomUuid(), sink: (framed) => sink.emit(commandRedactor(io)(framed)) }).emit;
    emit(event);
  };
}


/**
 * A path for people: relative to the current folder when inside it. Absolute paths under the
 * folder are cut by prefix (`path.relative` costs ~20 µs a call; `tools list` of 500 tools makes
 * 500 calls).
 */
export function shownPath(path: string | undefined, cwd: string): string {
  if (!path) return "";
  const prefix = cwd.endsWith(sep) ? cwd : cwd + sep;
  if (path.startsWith(prefix) && !path.includes(`${sep}..${sep}`) && !path.includes(`${sep}.${sep}`)) return path.slice(prefix.length);
  const rel = relative(cwd, path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}

/** Exit code for an error that escaped a tools command, after reporting it on stderr. */
export function reportCommandError(error: unknown, debug: boolean, io: CliIo): number {
  const redact = commandRedactor(io);
  reportUsageError(io, redact(messageOf(error)));
  if (debug && error instanceof Error && error.stack) reportUsageError(io, redact(error.stack));
  return exitCodeForError(error);
}
