/**
 * The session file format (docs/sessions.md, "The file"). One JSON object per file:
 *
 *   {format: "yiem-session", version: 1, id, revision, createdAt, updatedAt, spec, folder,
 *    forkedFrom: {id, revision} | null, runs: [{runId, savedAt, model, baseURL, spec, folder,
 *    stopReason, turns, messages}]}
 *
 * Rules:
 * - `version` is the format's version. A file with a higher one was written by a newer yiem and
 *   is refused (never rewritten in an older shape); a lower or missing one is not a session file.
 * - `revision` is 1 when the session is created and grows by 1 with every save: a save checks
 *   that the file still holds the revision the run read (store.ts).
 * - `updatedAt` (ISO-8601) is the time of the last save, kept inside the file: "most recent" is
 *   read from it, never from file times. `spec` and `folder` are those of the last run.
 * - The conversation is the runs' `messages` joined, in order (checked by ./messages.ts as one
 *   conversation); each run also records the model, base URL (null: the OpenAI default), spec
 *   and folder it ran with.
 */
import type { StopReason } from "../loop/types.js";
import type { ChatMessage } from "../provider/types.js";
import { checkStoredMessages } from "./messages.js";
import { sessionIdProblem } from "./ids.js";

export const SESSION_FORMAT = "yiem-session";
export const SESSION_FORMAT_VERSION = 1;

/** One run saved into a session: what it added and what it ran with. */
export interface SessionRun {
  runId: string;
  savedAt: string;
  /** The model name (`replay:/abs/file` for the replay model). */
  model: string;
  /** null: the OpenAI default (https://api.openai.com/v1). */
  baseURL: string | null;
  /** The spec's absolute path; null when the run had none. */
  spec: string | null;
  folder: string;
  stopReason: StopReason;
  /** Model turns of this run. */
  turns: number;
  /** The messages this run added (its prompt, the answers and tool results), never a system message. */
  messages: ChatMessage[];
}

export interface SessionFile {
  format: typeof SESSION_FORMAT;
  version: typeof SESSION_FORMAT_VERSION;
  id: string;
  revision: number;
  createdAt: string;
  updatedAt: string;
  /** The last run's spec and folder: what `--continue` matches. */
  spec: string | null;
  folder: string;
  forkedFrom: { id: string; revision: number } | null;
  runs: SessionRun[];
}

/** What `--continue` and `sessions list` need of a file whose header could be read. */
export interface SessionHeader {
  id: string;
  updatedAt: string;
  spec: string | null;
  folder: string;
}

const STOP_REASONS = new Set(["completed", "terminated", "maxTurns", "timeout", "budget", "loopDetected", "maxTokens", "outputInvalid", "aborted", "error"]);
const TOP_KEYS = ["format", "version", "id", "revision", "createdAt", "updatedAt", "spec", "folder", "forkedFrom", "runs"];
const RUN_KEYS = ["runId", "savedAt", "model", "baseURL", "spec", "folder", "stopReason", "turns", "messages"];

export type ParsedSession = { ok: true; session: SessionFile } | { ok: false; problem: string };

/** The whole conversation of a session. */
export function sessionMessages(session: SessionFile): ChatMessage[] {
  return session.runs.flatMap((run) => run.messages);
}

/** Parses and checks a session file's text; `expectedId` is the id its file name says. */
export function parseSessionFile(text: string, expectedId: string): ParsedSession {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const empty = text.trim() === "" ? "it is empty" : (error as Error).message;
    return { ok: false, problem: `not valid JSON (truncated or hand-edited?): ${empty}` };
  }
  if (!isObject(value) || value.format !== SESSION_FORMAT) return { ok: false, problem: `not a yiem session file (no "format": "${SESSION_FORMAT}")` };
  const version = value.version;
  if (typeof version === "number" && Number.isInteger(version) && version > SESSION_FORMAT_VERSION) {
    return { ok: false, problem: `written by a newer yiem (format version ${version}; this yiem reads version ${SESSION_FORMAT_VERSION}): upgrade yiem to use it` };
  }
  if (version !== SESSION_FORMAT_VERSION) return { ok: false, problem: `unknown format version ${JSON.stringify(version)} (this yiem reads version ${SESSION_FORMAT_VERSION})` };
  const problem = topProblem(value, expectedId) ?? runsProblem(value.runs as unknown[]);
  return problem ? { ok: false, problem } : { ok: true, session: value as unknown as SessionFile };
}

/**
 * The header of a file that is JSON in the session format, whatever its version (so `--continue`
 * can tell whether a newer-version file belongs to this spec and folder); undefined otherwise.
 */
export function readHeader(text: string): SessionHeader | undefined {
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    if (!isObject(value) || value.format !== SESSION_FORMAT) return undefined;
    if (typeof value.id !== "string" || !isTime(value.updatedAt) || !(value.spec === null || typeof value.spec === "string") || typeof value.folder !== "string") return undefined;
    return { id: value.id, updatedAt: value.updatedAt, spec: value.spec, folder: value.folder };
  } catch {
    return undefined;
  }
}

function topProblem(value: Record<string, unknown>, expectedId: string): string | undefined {
  const unknown = Object.keys(value).find((key) => !TOP_KEYS.includes(key));
  if (unknown !== undefined) return `unknown key ${JSON.stringify(unknown)}`;
  if (typeof value.id !== "string" || sessionIdProblem(value.id)) return '"id" must be a session id';
  if (value.id !== expectedId) return `it holds session ${JSON.stringify(value.id)}, not ${JSON.stringify(expectedId)} as its file name says (renamed by hand?)`;
  if (!Number.isInteger(value.revision) || (value.revision as number) < 1) return '"revision" must be an integer >= 1';
  if (!isTime(value.createdAt) || !isTime(value.updatedAt)) return '"createdAt" and "updatedAt" must be ISO-8601 times';
  if (!(value.spec === null || typeof value.spec === "string") || typeof value.folder !== "string") return '"spec" (a path or null) and "folder" (a path) are missing';
  const fork = value.forkedFrom;
  if (!(fork === null || (isObject(fork) && typeof fork.id === "string" && Number.isInteger(fork.revision)))) return '"forkedFrom" must be null or {id, revision}';
  if (!Array.isArray(value.runs)) return '"runs" must be a list';
  return undefined;
}

function runsProblem(runs: unknown[]): string | undefined {
  const open = new Set<string>();
  for (const [n, run] of runs.entries()) {
    const where = `runs[${n}]`;
    if (!isObject(run)) return `${where} must be an object`;
    const unknown = Object.keys(run).find((key) => !RUN_KEYS.includes(key));
    if (unknown !== undefined) return `unknown key ${JSON.stringify(unknown)} in ${where}`;
    if (typeof run.runId !== "string" || !isTime(run.savedAt) || typeof run.model !== "string" || typeof run.folder !== "string") {
      return `${where} needs "runId", "savedAt", "model" and "folder"`;
    }
    if (!(run.baseURL === null || typeof run.baseURL === "string") || !(run.spec === null || typeof run.spec === "string")) return `${where}: "baseURL" and "spec" must be strings or null`;
    if (typeof run.stopReason !== "string" || !STOP_REASONS.has(run.stopReason)) return `${where}: unknown "stopReason" ${JSON.stringify(run.stopReason)}`;
    if (!Number.isInteger(run.turns) || (run.turns as number) < 0) return `${where}: "turns" must be an integer >= 0`;
    const check = checkStoredMessages(run.messages, { where: `${where}.messages`, openCalls: open });
    if (!check.ok) return check.problem;
  }
  return undefined;
}

function isTime(value: unknown): value is string {
  return typeof value === "string" && /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
