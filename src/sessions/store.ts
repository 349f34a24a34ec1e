/**
 * The session store: one file per session, `<id>.json`, in one folder per user.
 * Rules:
 * - The folder is `YIEM_SESSION_DIR`, else `$XDG_STATE_HOME/yiem/sessions`, else
 *   `~/.local/state/yiem/sessions`, all of the caller's `env` (`~` is its HOME, ../home-folder.ts;
 *   relative values are taken from the caller's `cwd`). It is created mode 0700 on the first
 *   save; a folder writable by other users, or owned by another user, is refused (their runs
 *   could swap a conversation).
 * - A session file is read only as a regular file (../regular-file.ts) and fully checked
 *   (./format.ts) before use; a problem is an error naming the file and the problem, and the file
 *   is never touched (not rewritten, not moved).
 * - Writes are atomic with mode 0600 (../private-file.ts). A save first re-reads the file: it must
 *   still hold the revision the run read (or not exist, for a new session), else nothing is
 *   written. Callers hold the session's lock (./lock.ts) around read, run and save.
 * - Only names `<id>.json` with a valid id are sessions; temp files and locks are not listed.
 */
import { mkdir, readdir, stat, unlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { readRegularText } from "../regular-file.js";
import { homeFolder } from "../home-folder.js";
import { writeFileAtomic } from "../atomic-write.js";
import { UsageError } from "../errors.js";
import { parseSessionFile, readHeader, type SessionFile, type SessionHeader } from "./format.js";
import { SESSION_ID_PATTERN } from "./ids.js";

const FOLDER_MODE = 0o700;
const FILE_MODE = 0o600;

/** The store folder for `env` and `cwd` (rules above; the CLI's io, the process's for the library). */
export function sessionStoreDir(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  if (env.YIEM_SESSION_DIR) return resolve(cwd, env.YIEM_SESSION_DIR);
  if (env.XDG_STATE_HOME) return resolve(cwd, env.XDG_STATE_HOME, "yiem", "sessions");
  return join(homeFolder(env), ".local", "state", "yiem", "sessions");
}

/** A session file that cannot be used: the error names the file and the problem (exit 2). */
export class SessionFileError extends UsageError {
  constructor(readonly file: string, readonly problem: string) {
    super(`session file ${file}: ${problem}; the file was left as it is`);
  }
}

/** A save refused because the file changed since the run read it. */
export class SessionChangedError extends Error {
  override readonly name = "SessionChangedError";
}

/** One entry of the folder: its header when readable, else why not. */
export interface StoreEntry {
  id: string;
  file: string;
  header?: SessionHeader;
  problem?: string;
}

export class SessionStore {
  constructor(readonly dir: string) {}

  path(id: string): string {
    return join(this.dir, `${id}.json`);
  }

  /** Every id with a file in the folder, sorted; [] when the folder does not exist. */
  async ids(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw new UsageError(`cannot read the session folder ${this.dir}: ${(error as Error).message}`);
    }
    return names
      .filter((name) => name.endsWith(".json"))
      .map((name) => name.slice(0, -".json".length))
      .filter((id) => SESSION_ID_PATTERN.test(id))
      .sort();
  }

  /** Every session's header (what `--continue` and `list` need), or the problem reading it. */
  async entries(): Promise<StoreEntry[]> {
    const out: StoreEntry[] = [];
    for (const id of await this.ids()) {
      const entry = await this.entry(id);
      if (entry) out.push(entry);
    }
    return out;
  }

  /** Session `id`'s header, or the problem reading it; null when it has no file. */
  async entry(id: string): Promise<StoreEntry | null> {
    const file = this.path(id);
    const text = await this.readText(id).catch((error: Error) => error);
    if (text === null) return null;
    if (text instanceof Error) return { id, file, problem: text instanceof SessionFileError ? text.problem : text.message };
    const parsed = parseSessionFile(text, id);
    const header = parsed.ok ? parsed.session : readHeader(text);
    return { id, file, ...(header ? { header: { id, updatedAt: header.updatedAt, spec: header.spec, folder: header.folder } } : {}), ...(parsed.ok ? {} : { problem: parsed.problem }) };
  }

  /** The checked session `id`, or null when it has no file. Throws SessionFileError (rules above). */
  async read(id: string): Promise<SessionFile | null> {
    const text = await this.readText(id);
    if (text === null) return null;
    const parsed = parseSessionFile(text, id);
    if (!parsed.ok) throw new SessionFileError(this.path(id), parsed.problem);
    return parsed.session;
  }

  /**
   * Writes `next` (revision `previous + 1`, or 1 for a new session) after checking the file still
   * holds revision `previous` (null: it must not exist yet). Throws SessionChangedError otherwise.
   */
  async save(next: SessionFile, previous: number | null): Promise<void> {
    const text = await this.readText(next.id);
    const current = text === null ? null : parseSessionFile(text, next.id);
    if (previous === null && current !== null) throw new SessionChangedError(`session ${next.id} was created by another run meanwhile`);
    if (previous !== null) {
      if (current === null) throw new SessionChangedError(`session ${next.id} was removed while this run used it`);
      if (!current.ok) throw new SessionFileError(this.path(next.id), current.problem);
      if (current.session.revision !== previous) {
        throw new SessionChangedError(`session ${next.id} changed while this run used it (revision ${previous} is now ${current.session.revision})`);
      }
    }
    await this.ensureFolder();
    await writeFileAtomic(this.path(next.id), `${JSON.stringify(next, null, 2)}\n`, { exactMode: FILE_MODE });
  }

  /** Removes session `id`'s file; false when it had none. */
  async remove(id: string): Promise<boolean> {
    try {
      await unlink(this.path(id));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw error;
    }
  }

  /** Creates the folder (0700) or checks an existing one (rules above). */
  async ensureFolder(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: FOLDER_MODE });
    await this.checkFolder();
  }

  /** Checks the folder when it exists (rules above): sessions are read from it only then. */
  async checkFolder(): Promise<void> {
    let stats;
    try {
      stats = await stat(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw new UsageError(`cannot read the session folder ${this.dir}: ${(error as Error).message}`);
    }
    if (!stats.isDirectory()) throw new UsageError(`the session folder ${this.dir} is not a folder`);
    const uid = process.getuid?.();
    if (uid !== undefined && stats.uid !== uid) throw new UsageError(`the session folder ${this.dir} belongs to another user (uid ${stats.uid}); set YIEM_SESSION_DIR to a folder of your own`);
    if ((stats.mode & 0o022) !== 0) {
      throw new UsageError(`the session folder ${this.dir} is writable by other users (mode ${(stats.mode & 0o777).toString(8)}): run chmod 700 on it, or set YIEM_SESSION_DIR`);
    }
  }

  /** The text of session `id`'s file, or null when it has none. */
  private async readText(id: string): Promise<string | null> {
    const file = this.path(id);
    let read: { text: string } | { kind: string };
    try {
      read = await readRegularText(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw new SessionFileError(file, `cannot be read: ${(error as Error).message}`);
    }
    if ("kind" in read) throw new SessionFileError(file, `not a regular file (${read.kind})`);
    return read.text;
  }
}
