/**
 * Child processes for command tools and command hooks. Rules:
 * - argv only, never a shell; the child runs detached in its own process group;
 * - its environment is the parent's minus secret names and credential carriers (see `childEnv`);
 * - stdin gets `input` then closes; stdout is kept up to `maxOutputBytes` (the rest is read
 *   and dropped, then marked); stderr is split into lines for `onStderrLine` (cut the same way)
 *   and its last lines are kept for error messages;
 * - timeout or abort: SIGTERM to the whole group, SIGKILL after the grace period (`killGraceMs`:
 *   `YIEM_KILL_GRACE_MS` of the parent env, default 2000); when the main process ends, whatever
 *   is left of its group is ended the same way, so no grandchild outlives a call;
 * - live groups are tracked: `killAllChildren()` ends them at once (and runs on process exit).
 *
 * execa starts the child, writes its stdin and reports how it ended. Its `timeout`,
 * `cancelSignal`, `forceKillAfterDelay`, `maxBuffer`, `cleanup` and line splitting are not used,
 * each for the reason noted where the call is made: they act on the child's pid, never its group,
 * or stop reading where yiem must read on.
 */
import { StringDecoder } from "node:string_decoder";
import { isSecretEnvVar } from "../secrets.js";
import { graceMs } from "../grace-ms.js";
import { onProcessExit } from "../exit-listeners.js";

/**
 * The environment of every child (command tools, command hooks, MCP stdio servers): the parent's
 * without secret variables (`isSecretEnvVar`), plus `extra`, which is passed as given (a
 * manifest's `env` may name a secret on purpose). The parent is the call's environment (the
 * CLI's io.env); only a library caller that gives none gets the process's own.
 */
export function childEnv(extra: Record<string, string> = {}, parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value !== undefined && !isSecretEnvVar(name, value)) env[name] = value;
  }
  return Object.assign(env, extra);
}

export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
const DEFAULT_KILL_GRACE_MS = 2000;
const MAX_LINE_CHARS = 16 * 1024;
const TAIL_LINES = 20;

/**
 * The kill grace period of `env` (the parent environment of the children it ends, the CLI's
 * io.env): `YIEM_KILL_GRACE_MS` when it is valid (../grace-ms.ts), else 2000 ms. Only a library caller that
 * gives no env gets the process's own.
 */
export function killGraceMs(env: NodeJS.ProcessEnv = process.env): number {
  return graceMs(env, "YIEM_KILL_GRACE_MS", DEFAULT_KILL_GRACE_MS);
}

export interface RunProcessOptions {
  /** argv; `command[0]` is a path or a name looked up on PATH. */
  command: string[];
  cwd: string;
  /** The complete environment of the child (see `childEnv`). */
  env: Record<string, string>;
  /** Written to stdin, which is then closed. */
  input: string;
  signal?: AbortSignal;
  /** 0 or absent: no own timeout. */
  timeoutMs?: number;
  maxOutputBytes?: number;
  /** Default `killGraceMs()` (the process's env): a caller with an env of its own passes `killGraceMs(env)`. */
  killGraceMs?: number;
  /** Each stderr line as it arrives, in order, without its line break. */
  onStderrLine?: (line: string) => void;
}

export interface ProcessOutcome {
  pid: number | undefined;
  /** null when killed by a signal or never started. */
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  /** Bytes of stdout (and of stderr) read but not kept because of the limit. */
  stdoutCutBytes: number;
  stderrCutBytes: number;
  /** The last stderr lines, joined with "\n". */
  stderrTail: string;
  timedOut: boolean;
  aborted: boolean;
  /** Set when the process could not be started (e.g. ENOENT). */
  spawnError?: string;
}

const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** Sends `signal` to every live child process group now; returns how many were signalled. */
export function killAllChildren(signal: NodeJS.Signals = "SIGKILL"): number {
  let count = 0;
  for (const pgid of liveGroups) if (signalGroup(pgid, signal)) count++;
  return count;
}

/** SIGTERM to every live child group, then SIGKILL to what is left after `graceMs`. */
export async function terminateAllChildren(graceMs: number = killGraceMs()): Promise<void> {
  await Promise.all([...liveGroups].map((pgid) => endGroup(pgid, graceMs)));
}

/** Process group ids of children that are still running (or whose group is still being ended). */
export function liveProcessGroups(): number[] {
  return [...liveGroups];
}

/**
 * For children started elsewhere (MCP stdio servers): track a process group so that
 * `killAllChildren` and the exit hook end it too; `endProcessGroup` ends and untracks it.
 */
export function trackProcessGroup(pgid: number): void {
  trackGroup(pgid);
}

/** SIGTERM to the group, SIGKILL after `graceMs` if any member is left; then it is untracked. */
export async function endProcessGroup(pgid: number, graceMs: number = killGraceMs()): Promise<void> {
  try {
    await endGroup(pgid, graceMs);
  } finally {
    liveGroups.delete(pgid);
  }
}

function trackGroup(pgid: number): void {
  liveGroups.add(pgid);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    onProcessExit(() => killAllChildren("SIGKILL"));
  }
}

/** `kill(-pgid, signal)`; false when the group no longer exists. */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** SIGTERM to the group, SIGKILL after `graceMs` if any member is still there. */
async function endGroup(pgid: number, graceMs: number): Promise<void> {
  if (!signalGroup(pgid, "SIGTERM")) return;
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await sleep(Math.min(25, Math.max(1, deadline - Date.now())));
    if (!signalGroup(pgid, 0)) return;
  }
  signalGroup(pgid, "SIGKILL");
}

/** Runs one child to its end (and its whole group). Never throws; failures are in the outcome. */
export async function runProcess(options: RunProcessOptions): Promise<ProcessOutcome> {
  const { execa } = await import("execa");
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const graceMs = options.killGraceMs ?? killGraceMs();
  const outcome: ProcessOutcome = {
    pid: undefined, exitCode: null, signal: null, stdout: "", stdoutCutBytes: 0, stderrCutBytes: 0,
    stderrTail: "", timedOut: false, aborted: false,
  };
  if (options.signal?.aborted) {
    outcome.aborted = true;
    return outcome;
  }

  const [file, ...args] = options.command;
  const child = execa(file, args, {
    cwd: options.cwd,
    env: options.env,
    extendEnv: false,
    input: options.input,
    // Its own process group, so one kill(-pgid) reaches every grandchild too.
    detached: true,
    // execa's cleanup kills only the child's pid at exit; the exit hook (trackGroup) ends the group.
    cleanup: false,
    // No maxBuffer: hitting it destroys the stream and fails the call; yiem keeps reading, drops
    // the rest and marks the cut (a chatty tool still succeeds). Output is read below instead.
    buffer: false,
    reject: false,
    shell: false,
    windowsHide: true,
    // No timeout / cancelSignal / forceKillAfterDelay: they signal the child's pid alone, which
    // leaves its grandchildren holding the pipes; `stop` below ends the whole group (endGroup).
  });
  const pgid = child.pid;
  outcome.pid = pgid;
  if (pgid !== undefined) trackGroup(pgid);

  const stdoutChunks: string[] = [];
  let stdoutBytes = 0;
  const stdoutDecoder = new StringDecoder("utf8");
  child.stdout?.on("data", (chunk: Buffer) => {
    const room = maxBytes - stdoutBytes;
    if (room <= 0) {
      outcome.stdoutCutBytes += chunk.length;
      return;
    }
    const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
    outcome.stdoutCutBytes += chunk.length - kept.length;
    stdoutBytes += kept.length;
    stdoutChunks.push(stdoutDecoder.write(kept));
  });

  // Not execa's line splitting (`lines`, generator transforms): it holds a line until its newline
  // comes, without bound; a hostile tool's endless line must be cut at MAX_LINE_CHARS.
  const stderr = new LineSplitter(maxBytes, options.onStderrLine);
  child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));

  let ending: Promise<void> | undefined;
  const stop = (why: "timeout" | "abort") => {
    if (outcome.timedOut || outcome.aborted) return;
    if (why === "timeout") outcome.timedOut = true;
    else outcome.aborted = true;
    if (pgid !== undefined) ending ??= endGroup(pgid, graceMs);
  };
  const onAbort = () => stop("abort");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const timer = options.timeoutMs && options.timeoutMs > 0 ? setTimeout(() => stop("timeout"), options.timeoutMs) : undefined;
  // The main process is gone: end what is left of its group (background children), so the
  // pipes they hold close and nothing outlives the call.
  child.once("exit", () => {
    if (!ending && pgid !== undefined) ending = endGroup(pgid, graceMs);
  });

  try {
    const result = await child;
    outcome.exitCode = typeof result.exitCode === "number" ? result.exitCode : null;
    outcome.signal = result.signal ?? null;
    if (result.failed && result.exitCode === undefined && !result.signal && !outcome.timedOut && !outcome.aborted) {
      outcome.spawnError = spawnErrorMessage(result as unknown as { code?: string; shortMessage?: string; message: string }, file);
    }
  } finally {
    if (timer) clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    if (ending) await ending;
    if (pgid !== undefined) liveGroups.delete(pgid);
  }
  stdoutChunks.push(stdoutDecoder.end());
  outcome.stdout = stdoutChunks.join("");
  outcome.stderrCutBytes = stderr.finish();
  outcome.stderrTail = stderr.tail.join("\n");
  return outcome;
}

function spawnErrorMessage(result: { code?: string; message: string }, file: string): string {
  return spawnFailureText(result.code, file) ?? (result.code ? `${result.code} starting ${file}` : result.message.split("\n")[0]);
}

/** The text of the common reasons a program does not start (also for MCP stdio servers); else undefined. */
export function spawnFailureText(code: string | undefined, file: string): string | undefined {
  if (code === "ENOENT") return `command not found or cwd missing: ${file}`;
  if (code === "EACCES") return `command is not executable: ${file}`;
  return undefined;
}

/**
 * Splits a byte stream into lines, passing each to `onLine`; after `maxBytes` lines are no
 * longer passed on (one marker line is), and lines longer than MAX_LINE_CHARS are cut.
 * Keeps the last TAIL_LINES lines.
 */
class LineSplitter {
  private readonly decoder = new StringDecoder("utf8");
  private pending = "";
  private bytes = 0;
  private cutBytes = 0;
  private markerSent = false;
  readonly tail: string[] = [];

  constructor(private readonly maxBytes: number, private readonly onLine?: (line: string) => void) {}

  push(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      const over = Math.min(chunk.length, this.bytes - this.maxBytes);
      this.cutBytes += over;
      chunk = chunk.subarray(0, chunk.length - over);
      if (chunk.length === 0) return;
    }
    this.pending += this.decoder.write(chunk);
    let newline: number;
    while ((newline = this.pending.indexOf("\n")) >= 0) {
      this.emit(this.pending.slice(0, newline));
      this.pending = this.pending.slice(newline + 1);
    }
    if (this.pending.length > MAX_LINE_CHARS) {
      this.emit(this.pending);
      this.pending = "";
    }
  }

  /** Flushes the last partial line; returns the number of bytes cut. */
  finish(): number {
    this.pending += this.decoder.end();
    if (this.pending !== "") this.emit(this.pending);
    this.pending = "";
    if (this.cutBytes > 0 && !this.markerSent) {
      this.markerSent = true;
      const marker = `[… stderr cut: ${this.cutBytes} more bytes not shown]`;
      this.onLine?.(marker);
      this.keep(marker);
    }
    return this.cutBytes;
  }

  private emit(raw: string): void {
    let line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.length > MAX_LINE_CHARS) line = `${line.slice(0, MAX_LINE_CHARS)} [… line cut]`;
    this.onLine?.(line);
    this.keep(line);
  }

  private keep(line: string): void {
    this.tail.push(line);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
  }
}
