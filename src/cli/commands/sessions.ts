/**
 * `yiem sessions list|show|rm|prune` over the session store (docs/sessions.md). No spec and no
 * model are needed. Rules:
 * - `list [--json]`: every session, latest update first: id, last update, runs, model turns,
 *   spec, folder, first prompt (cut). A table on a terminal, tab-separated lines when piped;
 *   `--json` gives `{dir, sessions, problems}`. A file that cannot be read is a problem line on
 *   stderr (`--json`: in `problems`), never a reason to hide the others.
 * - `show ID` (a full id or unique prefix): the conversation, readable on a terminal; the file's
 *   JSON when piped or with `--json`. A broken file is exit 2 naming it.
 * - `rm ID…` (full ids): all must exist (else exit 2, nothing removed); a session another run
 *   holds is not removed (exit 1); the others are. Removed ids go to stdout.
 * - `prune --older-than AGE`: removes sessions whose `updatedAt` is older than AGE (`30d`); ones
 *   in use or unreadable are left, with a note on stderr. Removed ids go to stdout.
 */
import { parseDuration } from "../../config/duration.js";
import type { ChatMessage } from "../../provider/types.js";
import type { SessionFile } from "../../sessions/format.js";
import { sessionIdProblem, nearestIds } from "../../sessions/ids.js";
import { acquireSessionLock, SessionBusyError } from "../../sessions/lock.js";
import { SessionStore, sessionStoreDir } from "../../sessions/store.js";
import { reportUsageError } from "../errors.js";
import { UsageError } from "../../errors.js";
import { EXIT } from "../exit-codes.js";
import { printJson, printText } from "../output.js";
import { resolveResume } from "../run-session.js";
import { formatTable, oneLine } from "../table.js";
import { reportCommandError } from "./tools-context.js";
import type { CliIo } from "../io.js";
import { contentText } from "../../tools/content.js";

export async function handler(argv: Record<string, unknown>, io: CliIo): Promise<number> {
  const sub = String((argv._ as unknown[] | undefined)?.[1] ?? "");
  const store = new SessionStore(sessionStoreDir(io.env, io.cwd));
  try {
    // Another user's folder, or one others may write to, is refused for reading too (as by yiem run).
    await store.checkFolder();
    switch (sub) {
      case "list":
        return await listCommand(store, argv.json === true, io);
      case "show":
        return await showCommand(store, String(argv.id), argv.json === true, io);
      case "rm":
        return await rmCommand(store, ((argv.ids as unknown[]) ?? []).map(String), io);
      case "prune":
        return await pruneCommand(store, String(argv["older-than"]), argv["dry-run"] === true, io);
      default:
        throw new UsageError(`unknown sessions command "${sub}": use list, show, rm or prune`);
    }
  } catch (error) {
    return reportCommandError(error, Boolean(argv.debug), io);
  }
}

/** What `list` shows of one session. */
interface SessionSummary {
  id: string;
  updatedAt: string;
  createdAt: string;
  spec: string | null;
  folder: string;
  runs: number;
  turns: number;
  messages: number;
  firstPrompt: string;
  forkedFrom: SessionFile["forkedFrom"];
}

const PROMPT_CUT = 80;

async function listCommand(store: SessionStore, json: boolean, io: CliIo): Promise<number> {
  const sessions: SessionSummary[] = [];
  const problems: Array<{ file: string; problem: string }> = [];
  for (const id of await store.ids()) {
    try {
      const session = await store.read(id);
      if (session) sessions.push(summary(session));
    } catch (error) {
      const { file, problem } = error as { file?: string; problem?: string };
      problems.push({ file: file ?? store.path(id), problem: problem ?? (error as Error).message });
    }
  }
  sessions.sort((a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt) || b.id.localeCompare(a.id));
  if (json) {
    await printJson({ dir: store.dir, sessions, problems }, io.stdout);
    return EXIT.ok;
  }
  for (const { file, problem } of problems) reportUsageError(io, `warning: session file ${file}: ${problem}`);
  const rows = sessions.map((s) => [s.id, s.updatedAt, String(s.runs), String(s.turns), s.spec ?? "-", s.folder, cut(oneLine(s.firstPrompt), PROMPT_CUT)]);
  if (io.isTTY.stdout) {
    await printText(rows.length === 0 ? `no sessions in ${store.dir}` : formatTable(["ID", "UPDATED", "RUNS", "TURNS", "SPEC", "FOLDER", "FIRST PROMPT"], rows, io.stdout.columns || 100), io.stdout);
  } else await printText(rows.map((r) => r.join("\t")).join("\n"), io.stdout);
  return EXIT.ok;
}

function summary(session: SessionFile): SessionSummary {
  const messages = session.runs.flatMap((run) => run.messages);
  const first = messages.find((m) => m.role === "user");
  return {
    id: session.id,
    updatedAt: session.updatedAt,
    createdAt: session.createdAt,
    spec: session.spec,
    folder: session.folder,
    runs: session.runs.length,
    turns: session.runs.reduce((sum, run) => sum + run.turns, 0),
    messages: messages.length,
    firstPrompt: first ? cut(first.content, PROMPT_CUT) : "",
    forkedFrom: session.forkedFrom,
  };
}

async function showCommand(store: SessionStore, typed: string, json: boolean, io: CliIo): Promise<number> {
  const id = await resolveResume(store, typed, "sessions show");
  const session = await store.read(id);
  if (!session) throw new UsageError(`session ${id} was removed`);
  if (json || !io.isTTY.stdout) await printJson(session, io.stdout);
  else await printText(prettySession(session), io.stdout);
  return EXIT.ok;
}

function prettySession(session: SessionFile): string {
  const lines = [
    `session ${session.id}  (revision ${session.revision}${session.forkedFrom ? `, forked from ${session.forkedFrom.id} at revision ${session.forkedFrom.revision}` : ""})`,
    `created ${session.createdAt}, updated ${session.updatedAt}`,
    `spec ${session.spec ?? "(none)"}, folder ${session.folder}`,
  ];
  session.runs.forEach((run, n) => {
    lines.push("", `── run ${n + 1}: ${run.savedAt}, ${run.model}${run.baseURL ? ` at ${run.baseURL}` : ""}, ${run.stopReason}, ${run.turns} turn${run.turns === 1 ? "" : "s"}`);
    for (const message of run.messages) lines.push(...prettyMessage(message));
  });
  return lines.join("\n");
}

function prettyMessage(message: ChatMessage): string[] {
  switch (message.role) {
    case "user":
    case "system":
      return [`${message.role}: ${message.content}`];
    case "assistant":
      return [
        ...(message.content !== "" ? [`assistant: ${message.content}`] : []),
        ...message.toolCalls.map((call) => `assistant → ${call.name}(${cut(call.arguments, 200)})`),
      ];
    case "tool": {
      const text = contentText(message.content);
      return [`tool ${message.toolName}${message.isError ? " (error)" : ""}: ${cut(text, 400)}`];
    }
  }
}

async function rmCommand(store: SessionStore, ids: string[], io: CliIo): Promise<number> {
  const known = await store.ids();
  for (const id of ids) {
    const problem = sessionIdProblem(id);
    if (problem) throw new UsageError(`sessions rm: ${problem}`);
    if (!known.includes(id)) {
      const nearest = nearestIds(id, known);
      throw new UsageError(`sessions rm ${id}: no such session in ${store.dir} (rm takes full ids; nothing was removed)${nearest.length > 0 ? `; nearest: ${nearest.join(", ")}` : ""}`);
    }
  }
  const removed: string[] = [];
  let busy = false;
  for (const id of new Set(ids)) {
    const outcome = await removeUnlessBusy(store, id, io);
    if (outcome === "removed") removed.push(id);
    if (outcome === "busy") busy = true;
  }
  await printText(removed.join("\n"), io.stdout);
  return busy ? EXIT.failure : EXIT.ok;
}

/** Removes `id` under its lock, unless another run holds it (a note says so) or `stillWanted` says no. */
async function removeUnlessBusy(store: SessionStore, id: string, io: CliIo, stillWanted: () => Promise<boolean> = async () => true): Promise<"removed" | "busy" | "kept"> {
  let lock;
  try {
    lock = await acquireSessionLock(store.dir, id, { wait: false });
  } catch (error) {
    if (!(error instanceof SessionBusyError)) throw error;
    reportUsageError(io, `${error.message}: not removed`);
    return "busy";
  }
  try {
    if (!(await stillWanted())) return "kept";
    return (await store.remove(id)) ? "removed" : "kept";
  } finally {
    await lock.release();
  }
}

async function pruneCommand(store: SessionStore, olderThan: string, dryRun: boolean, io: CliIo): Promise<number> {
  const ageMs = parseAge(olderThan);
  if (!(ageMs > 0)) throw new UsageError("--older-than must be more than 0");
  const before = Date.now() - ageMs;
  const old = (updatedAt: string) => Date.parse(updatedAt) < before;
  const removed: string[] = [];
  for (const entry of await store.entries()) {
    if (!entry.header) {
      reportUsageError(io, `warning: session file ${entry.file}: ${entry.problem}; left as it is`);
      continue;
    }
    if (!old(entry.header.updatedAt)) continue;
    if (dryRun) {
      removed.push(entry.id);
      continue;
    }
    // Re-read under the lock: a run may have saved it since the listing.
    const stillOld = async () => {
      const now = await store.entry(entry.id);
      return now?.header !== undefined && old(now.header.updatedAt);
    };
    if ((await removeUnlessBusy(store, entry.id, io, stillOld)) === "removed") removed.push(entry.id);
  }
  await printText(removed.join("\n"), io.stdout);
  return EXIT.ok;
}

/** `30d` (days), or any duration parseDuration takes (`12h`, `90m`); a usage error otherwise. */
function parseAge(text: string): number {
  const days = /^\s*(\d+(?:\.\d+)?)\s*d\s*$/.exec(text);
  if (days) return Math.round(Number(days[1]) * 86_400_000);
  try {
    return parseDuration(text);
  } catch {
    throw new UsageError(`--older-than ${JSON.stringify(text)} is not an age (use a number with a unit: 30d, 12h, 90m)`);
  }
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
