/**
 * The human progress view of the event stream (`--events pretty`).
 *
 * Rules:
 * - Every string that came from the model, a tool, a hook or the config passes through
 *   {@link sanitizeForTerminal} before it is written; the only escape codes written are this
 *   file's own colours (only when `color`) and status-line control (only when `isTTY`).
 * - On a TTY a single status line (spinner, running tools, elapsed time, last partial result)
 *   sits below the output and is redrawn in place; without a TTY every fact is a plain line.
 * - Streamed assistant text is shown dim and indented as it arrives.
 */
import type { AgentEvent, StopReason } from "../../loop/types.js";
import type { ContentPart } from "../../tools/types.js";
import type { ChunkWriter } from "./chunk-writer.js";
import { sanitizeForTerminal } from "./sanitize.js";
import { createStyle, formatCount, formatDuration, plural, truncate, type Style } from "./style.js";
import { contentText } from "../../tools/content.js";

export interface PrettyRendererOptions {
  writer: ChunkWriter;
  isTTY: boolean;
  color: boolean;
  /** Current terminal width, read at each status-line draw (default 80). */
  columns?: () => number | undefined;
}

export interface PrettyRenderer {
  render(event: AgentEvent): void;
  note(message: string): void;
  /** Stops the spinner and leaves the cursor at the start of a clean line. */
  close(): void;
}

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const TICK_MS = 100;
const CLEAR_LINE = "\r\x1b[2K";
const INDENT = "  ";
/** A debug event shows this many characters of each body, or of an sdk line (the event itself has up to 4000). */
const DEBUG_PRETTY_CHARS = 300;

interface RunningTool {
  name: string;
  startedAt: number;
  last: string;
}

export function createPrettyRenderer(options: PrettyRendererOptions): PrettyRenderer {
  const { writer, isTTY } = options;
  const style = createStyle(options.color);
  const width = (): number => {
    const columns = options.columns?.();
    return columns && columns > 10 ? columns : 80;
  };
  const running = new Map<string, RunningTool>();
  let atLineStart = true;
  let statusShown = false;
  let textOpen = false;
  let streamedThisTurn = false;
  let frame = 0;
  let timer: ReturnType<typeof setInterval> | undefined;

  const out = (s: string): void => {
    if (s === "") return;
    writer.write(s);
    atLineStart = s.endsWith("\n");
  };
  const clearStatus = (): void => {
    if (!statusShown) return;
    writer.write(CLEAR_LINE);
    statusShown = false;
    atLineStart = true;
  };
  const drawStatus = (): void => {
    if (!isTTY || running.size === 0 || !atLineStart) return;
    const now = Date.now();
    const parts = [...running.values()].map((t) => `${t.name} ${formatDuration(now - t.startedAt)}${t.last ? ` · ${t.last}` : ""}`);
    const text = truncate(`${SPINNER[frame % SPINNER.length]} ${parts.join("  ")}`, width() - 1);
    writer.write((statusShown ? CLEAR_LINE : "") + style.dim(text));
    statusShown = true;
  };
  /** Writes one complete line (or several), keeping the status line below it. */
  const line = (s: string): void => {
    clearStatus();
    if (!atLineStart) out("\n");
    textOpen = false;
    out(`${s}\n`);
    drawStatus();
  };
  const writeAssistantText = (raw: string): void => {
    const text = sanitizeForTerminal(raw);
    if (text === "") return;
    clearStatus();
    if (!textOpen && !atLineStart) out("\n");
    textOpen = true;
    let chunk = "";
    let lineStart = atLineStart;
    const segments = text.split("\n");
    segments.forEach((segment, i) => {
      if (i > 0) {
        chunk += "\n";
        lineStart = true;
      }
      if (segment === "") return;
      if (lineStart) chunk += INDENT;
      chunk += style.dim(segment);
      lineStart = false;
    });
    out(chunk);
  };
  const endText = (): void => {
    if (textOpen && !atLineStart) out("\n");
    textOpen = false;
  };
  const startTimer = (): void => {
    if (!isTTY || timer) return;
    timer = setInterval(() => {
      frame++;
      drawStatus();
    }, TICK_MS);
    timer.unref?.();
  };
  const stopTimer = (): void => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };

  /** An event came before agentEnd: only a run that started has turns and tokens to sum up. */
  let started = false;
  const render = (event: AgentEvent): void => {
    if (event.type !== "agentEnd") started = true;
    switch (event.type) {
      case "agentStart": {
        const tools = event.tools.length === 0 ? "no tools" : plural(event.tools.length, "tool");
        const session = event.sessionId ? ` · session ${oneLine(event.sessionId)}` : "";
        const server = event.baseURL ? ` at ${oneLine(event.baseURL)}` : "";
        line(`${style.bold("yiem")} ${style.dim(`${oneLine(event.yiemVersion)} · model ${oneLine(event.model)}${server} · ${tools} (${event.toolExecution})${session}`)}`);
        return;
      }
      case "turnStart":
        streamedThisTurn = false;
        line(style.cyan(style.bold(`▸ turn ${event.turn}`)));
        return;
      case "messageUpdate":
        streamedThisTurn = true;
        writeAssistantText(event.delta);
        return;
      case "messageEnd":
        if (!streamedThisTurn) writeAssistantText(event.message.content);
        endText();
        if (event.finishReason === "length" || event.finishReason === "content_filter") {
          line(`${INDENT}${style.yellow(`⚠ the model stopped early (${oneLine(event.finishReason)})`)}`);
        }
        return;
      case "toolCallRejected":
        line(`${INDENT}${style.yellow("⊘")} ${style.bold(oneLine(event.toolName))} ${style.yellow("rejected:")} ${block(event.reason)}`);
        return;
      case "toolExecutionStart":
        running.set(event.toolCallId, { name: oneLine(event.toolName), startedAt: Date.now(), last: "" });
        line(`${INDENT}${style.cyan("→")} ${style.bold(oneLine(event.toolName))} ${style.dim(summarizeArgs(event.args))}`);
        startTimer();
        return;
      case "toolExecutionUpdate": {
        const last = truncate(lastLine(event.partialResult.content), 120);
        const tool = running.get(event.toolCallId);
        if (tool) tool.last = last;
        if (!isTTY && last !== "") line(`${INDENT}${INDENT}${style.dim(`… ${last}`)}`);
        return;
      }
      case "toolExecutionEnd": {
        running.delete(event.toolCallId);
        if (running.size === 0) stopTimer();
        const name = style.bold(oneLine(event.toolName));
        const took = style.dim(formatDuration(event.durationMs));
        const first = truncate(firstLine(event.result.content), 160);
        if (event.isError) line(`${INDENT}${style.red("✗")} ${name} ${took}${first ? ` ${style.red(first)}` : ""}`);
        else line(`${INDENT}${style.green("✓")} ${name} ${took}${first ? ` ${style.dim(first)}` : ""}`);
        return;
      }
      case "retry": {
        const status = event.status === null ? "connection error" : `HTTP ${event.status}`;
        line(`${INDENT}${style.yellow(`↻ retry ${event.attempt} in ${formatDuration(event.delayMs)} (${status}):`)} ${block(event.message)}`);
        return;
      }
      case "debug": {
        endText();
        if (event.kind === "sdk") {
          const level = event.level === "error" ? style.red(event.level) : event.level === "warn" ? style.yellow(event.level) : style.dim(event.level);
          line(`${INDENT}${style.dim("openai")} ${level} ${style.dim(truncate(oneLine(event.message), DEBUG_PRETTY_CHARS))}`);
          return;
        }
        const status = event.status === null ? style.red("no response") : event.status < 400 ? `${event.status}` : style.red(`${event.status}`);
        const retry = event.retry > 0 ? ` · retry ${event.retry}` : "";
        line(`${INDENT}${style.dim("⇄")} ${oneLine(event.method)} ${oneLine(event.url)} ${status} ${style.dim(`${formatDuration(event.headersMs)} to headers · ${formatDuration(event.durationMs)}${retry}`)}`);
        if (event.error) line(`${INDENT}${INDENT}${style.red(block(event.error))}`);
        for (const [label, body] of [["request", event.requestBody], ["response", event.responseBody]] as const) {
          if (body !== "") line(`${INDENT}${INDENT}${style.dim(`${label}: ${truncate(oneLine(body), DEBUG_PRETTY_CHARS)}`)}`);
        }
        return;
      }
      case "turnEnd":
        endText();
        return;
      case "warning":
        line(`${style.yellow("⚠")} ${block(event.message)}${event.path ? style.dim(` (${oneLine(event.path)})`) : ""}`);
        return;
      case "mcpServerReady":
        line(`${style.green("●")} ${style.bold(`mcp ${oneLine(event.server)}`)} ${style.dim(`${oneLine(event.serverInfo.name)} ${oneLine(event.serverInfo.version)} · ${plural(event.tools.length, "tool")} · ${formatDuration(event.durationMs)}`)}`);
        return;
      case "mcpServerError":
        line(`${event.required ? style.red("✗") : style.yellow("⚠")} ${style.bold(`mcp ${oneLine(event.server)}`)} ${style.dim(`(${event.phase})`)} ${block(event.message)}`);
        if (event.stderrTail) line(`${INDENT}${style.dim(block(event.stderrTail))}`);
        return;
      case "mcpToolsChanged":
        line(`${style.cyan("↻")} ${style.bold(`mcp ${oneLine(event.server)}`)} ${style.dim(`tools changed: +${event.added.length} −${event.removed.length}`)}`);
        return;
      case "agentEnd": {
        stopTimer();
        running.clear();
        clearStatus();
        if (!started) {
          // The run never started (a usage or spec error, or a signal first): no counts to show.
          line(event.error ? `${style.red("yiem:")} ${block(event.error)}` : outcome(event.stopReason, style));
          return;
        }
        const u = event.usage;
        const facts = [
          plural(event.turns, "turn"),
          plural(event.toolCalls, "tool call"),
          `${formatCount(u.totalTokens)} tokens (${formatCount(u.promptTokens)} prompt + ${formatCount(u.completionTokens)} completion)`,
          formatDuration(event.durationMs),
          ...(event.costUsd !== undefined ? [`$${event.costUsd}`] : []),
        ];
        line(`${outcome(event.stopReason, style)} ${style.dim(`· ${facts.join(" · ")}`)}`);
        if (event.error) line(`${INDENT}${style.red(block(event.error))}`);
        return;
      }
    }
  };

  return {
    render,
    note(message) {
      line(style.dim(block(message)));
    },
    close() {
      stopTimer();
      clearStatus();
      if (!atLineStart) out("\n");
      textOpen = false;
    },
  };
}

function outcome(stopReason: StopReason, style: Style): string {
  switch (stopReason) {
    case "completed":
    case "terminated":
      return style.green(style.bold(`✓ ${stopReason}`));
    case "error":
    case "aborted":
      return style.red(style.bold(`✗ ${stopReason}`));
    default:
      return style.yellow(style.bold(`■ ${stopReason}`));
  }
}

/** Sanitised, on one line: whitespace runs (including newlines) become one space. */
function oneLine(s: string): string {
  return sanitizeForTerminal(s).replace(/\s+/g, " ").trim();
}

/** Sanitised, continuation lines indented under the first. */
function block(s: string): string {
  return sanitizeForTerminal(s).trimEnd().replace(/\n/g, `\n${INDENT}${INDENT}`);
}


function firstLine(content: ContentPart[]): string {
  const text = contentText(content).trim();
  const end = text.indexOf("\n");
  return oneLine(end === -1 ? text : `${text.slice(0, end)} …`);
}

function lastLine(content: ContentPart[]): string {
  const text = contentText(content).trimEnd();
  return oneLine(text.slice(text.lastIndexOf("\n") + 1));
}

function summarizeArgs(args: unknown): string {
  let text: string;
  if (typeof args === "string") text = args;
  else {
    try {
      text = JSON.stringify(args) ?? String(args);
    } catch {
      text = "[unserialisable arguments]";
    }
  }
  return truncate(oneLine(text), 100);
}
