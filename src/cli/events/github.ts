/**
 * The GitHub Actions view of the event stream (`--events github`): workflow commands on stderr,
 * which the runner turns into annotations and (with step debugging on) debug lines.
 *
 * Rules:
 * - Every line written is one workflow command (`::name props::data`), never a plain line: the
 *   runner reads a line that starts with `::` (after leading blanks) as a command, so untrusted
 *   text (model output, tool results, file names) only ever appears inside a command's escaped
 *   data or properties, where it cannot start a command of its own (`::add-mask::`,
 *   `::stop-commands::`, `::set-output::` …), and the line is always a registered v2 command, so
 *   the runner never falls back to its older `##[` form either.
 * - Escaping follows GitHub's rules: data has `%`, `\r`, `\n` as `%25`, `%0D`, `%0A`; a property
 *   also `:` as `%3A` and `,` as `%2C`. Terminal control sequences are stripped first (the log view
 *   renders ANSI), and data is cut to DATA_CHARS characters (annotations are short anyway).
 * - A failed run (`agentEnd` with any stop reason but `completed`/`terminated`: it exits non-zero)
 *   is one `::error::` titled with what failed and why, with `file=` the run's spec when known;
 *   `warning` events and MCP servers that failed are `::warning::` (with `file=` when the warning
 *   names a path). Paths under `GITHUB_WORKSPACE` are written relative to it, as annotations
 *   expect. Retries, rejected and failed tool calls, a run's start and a successful end are
 *   `::debug::` lines, as are the openai package's own debug and info lines (its warn and error
 *   lines are `::warning::`); every other event writes nothing. Notes (`log`) are `::notice::`.
 * - Batch items (events carrying `itemId`) are named by their id in titles, so one annotation
 *   says which input line failed.
 * - Nothing secret: the events reaching a sink are already redacted (../commands/run.ts).
 */
import path from "node:path";
import type { AgentEvent } from "../../loop/types.js";
import type { ChunkWriter } from "./chunk-writer.js";
import { sanitizeForTerminal } from "./sanitize.js";
import { plural } from "./style.js";

/** The workflow commands yiem writes. */
export type WorkflowCommand = "error" | "warning" | "notice" | "debug";

/** Annotation properties, in the order GitHub documents them. */
export interface WorkflowProperties {
  title?: string;
  file?: string;
  line?: number;
}

/** A command's data is cut to this many characters before escaping. */
export const DATA_CHARS = 4000;

/** `text` escaped as workflow command data (module rules). */
export function escapeCommandData(text: string): string {
  return text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

/** `text` escaped as a workflow command property value (module rules). */
export function escapeCommandProperty(text: string): string {
  return escapeCommandData(text).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

/** One workflow command line (with its newline): untrusted `data` and properties are made safe. */
export function workflowCommand(name: WorkflowCommand, data: string, properties: WorkflowProperties = {}): string {
  const props = Object.entries(properties)
    .filter(([, value]) => value !== undefined && value !== "")
    .map(([key, value]) => `${key}=${escapeCommandProperty(clean(String(value)))}`)
    .join(",");
  return `::${name}${props === "" ? "" : ` ${props}`}::${escapeCommandData(cut(clean(data)))}\n`;
}

function clean(text: string): string {
  return sanitizeForTerminal(text);
}

function cut(text: string): string {
  return text.length <= DATA_CHARS ? text : `${text.slice(0, DATA_CHARS)}… [${text.length - DATA_CHARS} more characters]`;
}

export interface GithubRendererOptions {
  writer: ChunkWriter;
  /** The environment: `GITHUB_WORKSPACE` makes annotation paths relative to the checkout. */
  env?: NodeJS.ProcessEnv;
}

export interface GithubRenderer {
  render(event: AgentEvent): void;
  note(message: string): void;
}

export function createGithubRenderer(options: GithubRendererOptions): GithubRenderer {
  const { writer } = options;
  const workspace = options.env?.GITHUB_WORKSPACE;
  /** Each run's spec file, from its agentStart, for the annotation of its failure. */
  const specOf = new Map<string, string>();
  const write = (name: WorkflowCommand, data: string, properties?: WorkflowProperties) => writer.write(workflowCommand(name, data, properties));
  const relative = (file: string | undefined | null): string | undefined => {
    if (typeof file !== "string" || file === "") return undefined;
    if (!workspace || !path.isAbsolute(file)) return file;
    const rel = path.relative(workspace, file);
    return rel === "" || rel.startsWith("..") || path.isAbsolute(rel) ? file : rel.split(path.sep).join("/");
  };

  return {
    render(event) {
      const subject = subjectOf(event);
      switch (event.type) {
        case "agentStart": {
          if (typeof event.configPath === "string") specOf.set(event.runId, event.configPath);
          write("debug", `${subject} started (run ${event.runId}): model ${event.model}, tools ${event.tools.length === 0 ? "none" : event.tools.join(", ")}`);
          return;
        }
        case "warning":
          write("warning", event.message, { title: `${subject}: warning${event.code ? ` (${event.code})` : ""}`, file: relative(event.path) });
          return;
        case "mcpServerError": {
          const tail = event.stderrTail ? `\nserver stderr:\n${event.stderrTail}` : "";
          write("warning", `${event.message}${tail}`, { title: `${subject}: MCP server "${event.server}" failed (${event.phase}${event.required ? ", required" : ""})` });
          return;
        }
        case "retry":
          write("debug", `${subject}: model request retry ${event.attempt} in ${event.delayMs} ms (${event.status ?? "no response"}): ${event.message}`);
          return;
        case "debug":
          // The openai package's own lines (OPENAI_LOG); HTTP exchanges write nothing.
          if (event.kind !== "sdk") return;
          if (event.level === "error" || event.level === "warn") write("warning", event.message, { title: `${subject}: openai package ${event.level}` });
          else write("debug", `${subject}: openai package ${event.level}: ${event.message}`);
          return;
        case "toolCallRejected":
          write("debug", `${subject}: tool call ${event.toolName} rejected: ${event.reason}`);
          return;
        case "toolExecutionEnd":
          if (event.isError) write("debug", `${subject}: tool ${event.toolName} failed after ${Math.round(event.durationMs)} ms`);
          return;
        case "agentEnd": {
          const spec = specOf.get(event.runId);
          specOf.delete(event.runId);
          const facts = `${plural(event.turns ?? 0, "turn")}, ${plural(event.toolCalls ?? 0, "tool call")}, ${event.usage?.totalTokens ?? 0} tokens, ${Math.round(event.durationMs ?? 0)} ms`;
          if (event.stopReason === "completed" || event.stopReason === "terminated") {
            write("debug", `${subject} ${event.stopReason} (run ${event.runId}): ${facts}`);
            return;
          }
          const why = typeof event.error === "string" && event.error !== "" ? event.error : `the run stopped: ${event.stopReason}`;
          write("error", `${why}\n(run ${event.runId}: ${facts})`, { title: `${subject} failed: ${event.stopReason}`, file: relative(spec) });
          return;
        }
        default:
          return;
      }
    },
    note(message) {
      write("notice", message);
    },
  };
}

/** "yiem", or the batch item the event belongs to. */
function subjectOf(event: AgentEvent): string {
  const itemId = (event as { itemId?: unknown }).itemId;
  return typeof itemId === "string" ? `yiem batch item ${JSON.stringify(itemId)}` : "yiem";
}
