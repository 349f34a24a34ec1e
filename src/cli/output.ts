/**
 * The result printer: the only module that writes to stdout.
 *
 * Rules:
 * - `run --output text`: the final assistant text followed by one newline; nothing at all when
 *   the text is empty (a run that ended without an answer: the exit code and the events say why).
 *   The text is printed whatever the stop reason, since `RunResult.text` is only set for an answer.
 * - `run --output text` with an output schema: the answer's JSON value on one line (so `| jq`
 *   reads it), or nothing at all when the run ended without a valid one.
 * - `run --output json`: exactly one JSON object on one line on every path, also when the run could
 *   not start (a usage or spec error) or was ended from outside the loop; every key is always
 *   present (ResultJson says when one is null), then a newline.
 * - Text goes out byte for byte when stdout is a pipe or a file; on a terminal it is passed through
 *   `sanitizeForTerminal` (model and tool text is untrusted). JSON on a terminal has its C1
 *   controls escaped, which keeps it valid JSON; JSON anywhere has U+0085/U+2028/U+2029 escaped,
 *   so `--output json` is one line also for readers that split on them.
 * - Every function resolves once the stream has accepted the bytes. A reader that went away
 *   (EPIPE, e.g. `| head`) is not an error: the output is simply dropped.
 */
import { writeSync } from "node:fs";
import { ownWrite } from "../channels/guard.js";
import type { RunResult } from "../loop/types.js";
import type { Usage } from "../tools/types.js";
import { zeroUsage } from "../tools/usage.js";
import { exitCodeFor } from "./exit-codes.js";
import { escapeJsonForTerminal, escapeJsonLineBreaks, sanitizeForTerminal } from "./events/sanitize.js";

export type OutputFormat = "text" | "json";

export const OUTPUT_FORMATS: readonly OutputFormat[] = ["text", "json"];

/** The `--output json` object (docs/cli.md, "stdout: the result"). Every key is always present. */
export interface ResultJson {
  /** The run's id, as in its events. */
  runId: string;
  /** The final answer; "" when the run ended without one. */
  text: string;
  stopReason: RunResult["stopReason"];
  /** The last model response's `finish_reason`; null when the run got no response. */
  finishReason: RunResult["finishReason"];
  turns: number;
  toolCalls: number;
  usage: Usage;
  durationMs: number;
  /** What went wrong; null when nothing did. */
  error: string | null;
  /** The process's exit code (docs/reliability.md). */
  exitCode: number;
  /** The stored session the run reads and saves (docs/sessions.md); null when it uses none. */
  sessionId: string | null;
  /** The model the run asked (as agentStart names it); null when the run ended before one was set up. */
  model: string | null;
  /** The run's cost in USD (usage.costUsd); null when the spec sets no model.pricing. */
  costUsd: number | null;
  /**
   * With an output schema: the final answer's JSON value, valid against it; null without a schema
   * or when the run ended without a valid answer (stopReason `outputInvalid`: `text` holds the last invalid one).
   */
  structured: unknown;
}

export function resultToJson(result: RunResult, exitCode: number = exitCodeFor(result.stopReason), sessionId: string | null = null): ResultJson {
  return {
    runId: result.runId,
    text: result.text,
    stopReason: result.stopReason,
    finishReason: result.finishReason,
    turns: result.turns,
    toolCalls: result.toolCalls,
    usage: {
      promptTokens: result.usage.promptTokens,
      completionTokens: result.usage.completionTokens,
      totalTokens: result.usage.totalTokens,
      ...(result.usage.cachedPromptTokens !== undefined ? { cachedPromptTokens: result.usage.cachedPromptTokens } : {}),
      ...(result.usage.costUsd !== undefined ? { costUsd: result.usage.costUsd } : {}),
    },
    durationMs: result.durationMs,
    error: result.error ?? null,
    exitCode,
    sessionId,
    model: result.model ?? null,
    costUsd: result.usage.costUsd ?? null,
    structured: result.structured ?? null,
  };
}

/** The result of a run that ended before or outside the loop: no answer, the given outcome. */
export function unfinishedResult(outcome: Pick<RunResult, "runId" | "stopReason" | "error"> & Partial<Pick<RunResult, "turns" | "toolCalls" | "usage" | "durationMs">>): RunResult {
  return {
    text: "",
    turns: 0,
    toolCalls: 0,
    usage: zeroUsage(),
    durationMs: 0,
    messages: [],
    finishReason: null,
    ...outcome,
  };
}

/**
 * The JSON result written at once, for an exit that cannot wait for a stream (a second signal,
 * the watchdog, a usage error before anything else started). Never throws.
 */
export function printResultJsonSync(stream: NodeJS.WritableStream, result: RunResult, exitCode: number, sessionId: string | null = null): void {
  try {
    const line = jsonLine(resultToJson(result, exitCode, sessionId), isTTY(stream), undefined);
    // A stream on a file descriptor (the process's stdout) is written at once, past its queue.
    const fd = (stream as { fd?: unknown }).fd;
    if (typeof fd === "number") writeSync(fd, line);
    else ownWrite(() => stream.write(line));
  } catch {
    // stdout is gone: nothing to add
  }
}

/** Prints a run's result in the chosen format (see module rules). */
export function printResult(
  result: RunResult,
  format: OutputFormat,
  stream: NodeJS.WritableStream,
  exitCode: number = exitCodeFor(result.stopReason),
  sessionId: string | null = null,
): Promise<void> {
  if (format === "json") return writeJsonLine(resultToJson(result, exitCode, sessionId), stream, undefined);
  // With an output schema stdout is the JSON value alone, one line (`null` too, when the schema allows it), or nothing when no answer validated.
  if (result.structured !== undefined) return (result.answered ?? result.structured !== null) ? writeJsonLine(result.structured, stream, undefined) : Promise.resolve();
  if (result.text === "") return Promise.resolve();
  return writeOut(stream, `${forTerminal(result.text, stream)}\n`);
}

export interface PrintJsonOptions {
  /** Spaces of indentation; 0 prints one line. Default 2. */
  indent?: number;
}

/** Prints any JSON value and a newline (for `config --json`, `tools list --json`, …). */
export function printJson(
  value: unknown,
  stream: NodeJS.WritableStream,
  options: PrintJsonOptions = {},
): Promise<void> {
  return writeJsonLine(value, stream, options.indent ?? 2);
}

/** Prints text, adding a newline unless it already ends with one; prints nothing for "". */
export function printText(text: string, stream: NodeJS.WritableStream): Promise<void> {
  if (text === "") return Promise.resolve();
  const safe = forTerminal(text, stream);
  return writeOut(stream, safe.endsWith("\n") ? safe : `${safe}\n`);
}

function writeJsonLine(value: unknown, stream: NodeJS.WritableStream, indent: number | undefined): Promise<void> {
  return writeOut(stream, jsonLine(value, isTTY(stream), indent));
}

/** `value` as JSON and a newline, escaped for where it goes (see module rules). */
function jsonLine(value: unknown, tty: boolean, indent: number | undefined): string {
  const json = JSON.stringify(value, null, indent || undefined) ?? "null";
  return `${tty ? escapeJsonForTerminal(json) : escapeJsonLineBreaks(json)}\n`;
}

function forTerminal(text: string, stream: NodeJS.WritableStream): string {
  return isTTY(stream) ? sanitizeForTerminal(text) : text;
}

function isTTY(stream: NodeJS.WritableStream): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

const guarded = new WeakSet<NodeJS.WritableStream>();

/** Writes one chunk; resolves when the stream accepted it (EPIPE resolves too), rejects on other errors. */
function writeOut(stream: NodeJS.WritableStream, chunk: string): Promise<void> {
  if (!guarded.has(stream)) {
    // Without a listener an EPIPE 'error' event would crash the process; the write callback reports it.
    stream.on("error", () => {});
    guarded.add(stream);
  }
  return new Promise((resolve, reject) => {
    try {
      ownWrite(() => stream.write(chunk, (error?: Error | null) => {
        if (!error || (error as NodeJS.ErrnoException).code === "EPIPE") resolve();
        else reject(error);
      }));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EPIPE") resolve();
      else reject(error);
    }
  });
}
