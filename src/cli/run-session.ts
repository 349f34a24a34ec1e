/**
 * The session store as `yiem run` uses it (docs/sessions.md): which session a run reads and
 * writes, given `--save`/`--no-save`, `--continue`, `--resume ID`, `--fork`, `--session-id ID`,
 * `--no-wait` and the spec's `sessions.save`.
 *
 * Rules:
 * - The flags are checked before anything is read; a clash is a usage error (exit 2). `--session
 *   FILE` (./session.ts) takes none of them.
 * - `--continue` picks, among the sessions whose last run used this spec in this folder, the one
 *   with the latest `updatedAt` inside its file. No such session: exit 2, never a fresh start. A
 *   file in the store that is not even readable as a session makes `--continue` fail naming it
 *   (it might be the latest); the chosen file is fully checked.
 * - `--resume ID` takes a full id or a unique prefix; a missing id is exit 2 listing the nearest.
 * - Continuing a session (without `--fork`) takes its lock before reading it and keeps it until
 *   the save; `--fork`, `--no-save` and `--dry-run` only read the session, which stays unchanged.
 *   A new session (`--save`, `--session-id`, `--fork`) is locked under its new id, and an id
 *   that exists already is exit 2.
 * - The save appends one run record (the messages this run added, without system messages, and
 *   the model, base URL, spec and folder it ran with) and bumps the revision (../sessions/store.ts).
 */
import type { ResolvedSpec } from "../config/types.js";
import type { RunResult } from "../loop/types.js";
import type { ChatMessage } from "../provider/types.js";
import { UsageError } from "../errors.js";
import { SessionStore, sessionStoreDir } from "../sessions/store.js";
import type { CliIo } from "./io.js";
import { SESSION_FORMAT, SESSION_FORMAT_VERSION, sessionMessages, type SessionFile, type SessionRun } from "../sessions/format.js";
import { generateSessionId, resolveSessionId, sessionIdProblem } from "../sessions/ids.js";
import { acquireSessionLock, SessionBusyError, type LockHolder, type SessionLock } from "../sessions/lock.js";
import { checkStoredMessages } from "../sessions/messages.js";

/** What the flags and the spec ask of the store. */
export interface SessionRequest {
  /** `none`: no stored session (maybe `--session FILE`); `new`: save as a new session. */
  kind: "none" | "new" | "continue" | "resume";
  /** `--resume`'s id or prefix. */
  resume?: string;
  fork: boolean;
  /** `--session-id`: the new session's id. */
  newId?: string;
  /** Whether this run is written back (false: `--no-save` with --continue/--resume). */
  save: boolean;
  wait: boolean;
}

/** The flags checked (rules above). */
export function sessionRequest(argv: Record<string, unknown>, spec: ResolvedSpec): SessionRequest {
  const cont = argv.continue === true;
  const resume = argv.resume === undefined ? undefined : String(argv.resume);
  const fork = argv.fork === true;
  const newId = argv["session-id"] === undefined ? undefined : String(argv["session-id"]);
  const saveFlag = argv.save as boolean | undefined;
  const wait = argv.wait !== false;
  const storeFlags = [cont && "--continue", resume !== undefined && "--resume", fork && "--fork", newId !== undefined && "--session-id", saveFlag === true && "--save"].filter(Boolean);
  if (argv.session !== undefined && storeFlags.length > 0) {
    throw new UsageError(`--session FILE keeps its own file and cannot be combined with ${storeFlags.join(", ")} (the session store)`);
  }
  if (cont && resume !== undefined) throw new UsageError("--continue and --resume both pick the session to continue: give one of them");
  if (resume !== undefined && resume.trim() === "") throw new UsageError("--resume needs a session id (or a unique prefix of one)");
  if (fork && !cont && resume === undefined) throw new UsageError("--fork starts a new session from an old one: add --continue or --resume ID");
  if (newId !== undefined) {
    const problem = sessionIdProblem(newId);
    if (problem) throw new UsageError(`--session-id: ${problem}`);
    if ((cont || resume !== undefined) && !fork) throw new UsageError("--session-id names a new session; to give a continued session a new id, add --fork");
  }
  if (saveFlag === false && (fork || newId !== undefined)) throw new UsageError(`--no-save cannot be combined with ${fork ? "--fork" : "--session-id"}, which saves a new session`);
  if (cont || resume !== undefined) {
    return { kind: cont ? "continue" : "resume", ...(resume !== undefined ? { resume } : {}), fork, ...(newId !== undefined ? { newId } : {}), save: saveFlag !== false, wait };
  }
  const save = argv.session === undefined && (saveFlag ?? (newId !== undefined || spec.sessions.save));
  return { kind: save ? "new" : "none", fork: false, ...(newId !== undefined ? { newId } : {}), save, wait };
}

/** A stored session as one run uses it. */
export interface RunSession {
  /** The session this run belongs to (the new one for a fork); null for a dry run of a new one. */
  id: string | null;
  /** The conversation so far (no system message). */
  history: ChatMessage[];
  /** Appends this run and writes the file (a no-op when the run is not saved). */
  save(result: RunResult): Promise<void>;
  /** Releases the lock, if held; safe to call more than once. */
  release(): Promise<void>;
}

export interface OpenOptions {
  signal: AbortSignal;
  /** Read only: no lock, no save (`--dry-run`). */
  dryRun: boolean;
  /** Called as soon as the session id is known (before any wait). */
  onId(id: string): void;
  /** Called when the session's lock is held by another run and this one waits. */
  onWaiting(id: string, holder: LockHolder | undefined): void;
}

/** Opens what `request` asks for (rules above); null when the run uses no stored session. */
export async function openRunSession(request: SessionRequest, spec: ResolvedSpec, options: OpenOptions, io: Pick<CliIo, "env" | "cwd">): Promise<RunSession | null> {
  if (request.kind === "none") return null;
  const store = new SessionStore(sessionStoreDir(io.env, io.cwd));
  await store.checkFolder();
  const scope = { spec: spec.configPath, folder: io.cwd };
  let source: SessionFile | null = null;
  if (request.kind !== "new") {
    const id = request.kind === "continue" ? await latestInScope(store, scope) : await resolveResume(store, request.resume!);
    const continuing = !request.fork && request.save && !options.dryRun;
    if (!continuing) {
      source = await readExisting(store, id);
      if (!request.fork || options.dryRun) {
        options.onId(id);
        return readOnly(id, sessionMessages(source));
      }
    } else {
      options.onId(id);
      const lock = await lockSession(store, id, request, options);
      try {
        const session = await readExisting(store, id);
        return writable(store, spec, scope, lock, session.id, session, session.runs, session.revision, null);
      } catch (error) {
        await lock.release();
        throw error;
      }
    }
  }
  if (options.dryRun) return readOnly(request.newId ?? null, source ? sessionMessages(source) : []);
  // A new session: plain --save / --session-id, or a fork of `source`.
  const id = request.newId ?? generateSessionId();
  options.onId(id);
  await store.ensureFolder();
  const lock = await lockSession(store, id, request, options);
  try {
    if ((await store.ids()).includes(id)) throw new UsageError(`session ${id} exists already: --resume ${id} continues it (or choose another --session-id)`);
    const forkedFrom = source ? { id: source.id, revision: source.revision } : null;
    return writable(store, spec, scope, lock, id, null, source?.runs ?? [], null, forkedFrom);
  } catch (error) {
    await lock.release();
    throw error;
  }
}

function readOnly(id: string | null, history: ChatMessage[]): RunSession {
  return { id, history, save: async () => {}, release: async () => {} };
}

function writable(
  store: SessionStore,
  spec: ResolvedSpec,
  scope: { spec: string | null; folder: string },
  lock: SessionLock,
  id: string,
  session: SessionFile | null,
  earlierRuns: SessionRun[],
  revision: number | null,
  forkedFrom: SessionFile["forkedFrom"],
): RunSession {
  const history = earlierRuns.flatMap((run) => run.messages);
  return {
    id,
    history,
    async save(result) {
      const now = new Date().toISOString();
      const added = result.messages.filter((m) => m.role !== "system").slice(history.length);
      const check = checkStoredMessages([...history, ...added]);
      if (!check.ok) throw new Error(`this run's conversation cannot be stored (${check.problem})`);
      const run: SessionRun = {
        runId: result.runId,
        savedAt: now,
        model: spec.model.replayFile ? `replay:${spec.model.replayFile}` : spec.model.name,
        baseURL: spec.model.replayFile ? null : spec.model.baseURL ?? null,
        spec: scope.spec,
        folder: scope.folder,
        stopReason: result.stopReason,
        turns: result.turns,
        messages: added,
      };
      const next: SessionFile = {
        format: SESSION_FORMAT,
        version: SESSION_FORMAT_VERSION,
        id,
        revision: (revision ?? 0) + 1,
        createdAt: session?.createdAt ?? now,
        updatedAt: now,
        spec: scope.spec,
        folder: scope.folder,
        forkedFrom: session?.forkedFrom ?? forkedFrom,
        runs: [...earlierRuns, run],
      };
      await store.save(next, revision);
    },
    release: () => lock.release(),
  };
}

async function lockSession(store: SessionStore, id: string, request: SessionRequest, options: OpenOptions): Promise<SessionLock> {
  await store.ensureFolder();
  try {
    return await acquireSessionLock(store.dir, id, { wait: request.wait, signal: options.signal, onWaiting: (holder) => options.onWaiting(id, holder) });
  } catch (error) {
    if (error instanceof SessionBusyError) throw new Error(`${error.message}; not waited for (--no-wait)`);
    throw error;
  }
}

async function readExisting(store: SessionStore, id: string): Promise<SessionFile> {
  const session = await store.read(id);
  if (!session) throw new UsageError(`session ${id} was removed (it is no longer in ${store.dir})`);
  return session;
}

/** `--continue`: the session of this spec and folder with the latest `updatedAt` (rules above). */
async function latestInScope(store: SessionStore, scope: { spec: string | null; folder: string }): Promise<string> {
  const entries = await store.entries();
  const unreadable = entries.find((entry) => !entry.header);
  if (unreadable) throw new UsageError(`session file ${unreadable.file}: ${unreadable.problem}; --continue cannot tell whether it is the latest session here (fix or remove it, or use --resume ID); the file was left as it is`);
  const mine = entries
    .filter((entry) => entry.header!.spec === scope.spec && entry.header!.folder === scope.folder)
    .sort((a, b) => Date.parse(b.header!.updatedAt) - Date.parse(a.header!.updatedAt) || b.id.localeCompare(a.id));
  if (mine.length === 0) {
    const where = scope.spec ? `spec ${scope.spec}` : "no spec";
    const others = entries.length > 0 ? `${entries.length} other session(s) are stored (yiem sessions list; --resume ID continues one)` : "none is stored yet (--save starts one)";
    throw new UsageError(`--continue: no session to continue for ${where} in folder ${scope.folder} in ${store.dir}; ${others}`);
  }
  return mine[0].id;
}

/** `--resume ID`: a full id or a unique prefix; a miss lists the nearest ids. */
export async function resolveResume(store: SessionStore, typed: string, flag = "--resume"): Promise<string> {
  const problem = /^[A-Za-z0-9_-]+$/.test(typed) ? undefined : sessionIdProblem(typed);
  if (problem) throw new UsageError(`${flag}: ${problem}`);
  const ids = await store.ids();
  const match = resolveSessionId(typed, ids);
  if (match.kind === "found") return match.id;
  if (match.kind === "ambiguous") throw new UsageError(`${flag} ${typed}: several sessions start with it (${match.matches.slice(0, 10).join(", ")}): give more of the id`);
  const nearest = match.nearest.length > 0 ? `; nearest: ${match.nearest.join(", ")}` : "; none is stored yet";
  throw new UsageError(`${flag} ${typed}: no such session in ${store.dir}${nearest}`);
}
