/**
 * The stdio transport for MCP servers, yiem's own (the SDK's kills only the direct child, which
 * leaves `npx`-launched servers behind). Rules:
 * - argv only, no shell; the server runs detached in its own process group, tracked with the
 *   command tools' groups (tools/process.ts), so every exit path of yiem ends it;
 * - stdout carries only newline-delimited JSON-RPC: any other line is a protocol error that
 *   closes the connection (`onerror`, then `onclose`), never silently skipped (the SDK's client
 *   checks each message's shape further);
 * - this module does not load the SDK, so a server is spawned while the SDK is still loading;
 * - stderr is piped, never mixed into yiem's stderr; its last lines are kept (`stderrTail`);
 * - close(): stdin is closed, the server gets `STDIN_CLOSE_WAIT_MS` to exit, then its whole
 *   group gets SIGTERM and, after the kill grace period, SIGKILL — also when the server itself
 *   already exited (its grandchildren may not have).
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { endProcessGroup, killGraceMs, spawnFailureText, trackProcessGroup } from "../tools/process.js";

/** How long a server may take to exit by itself once its stdin is closed. */
export const STDIN_CLOSE_WAIT_MS = 500;
const TAIL_LINES = 20;
const MAX_TAIL_LINE_CHARS = 2000;
/** A stdout line longer than this without a newline is a broken server. */
const MAX_MESSAGE_CHARS = 64 * 1024 * 1024;

export interface StdioServerOptions {
  command: string[];
  cwd: string;
  /** The complete environment of the server. */
  env: Record<string, string>;
  /** SIGTERM to SIGKILL when its group is ended (default `killGraceMs()`, the process's env; ./connection.ts passes its parent env's). */
  killGraceMs?: number;
}

/** Why the connection ended, for error messages: exit code or signal, or a protocol problem. */
export interface StdioEnd {
  exitCode: number | null;
  signal: string | null;
}

export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly tail: string[] = [];
  private stderrPending = "";
  private readonly stderrDecoder = new StringDecoder("utf8");
  private readonly stdoutDecoder = new StringDecoder("utf8");
  private stdoutPending = "";
  private closed = false;
  private closing = false;
  private exited: Promise<StdioEnd> | undefined;
  /** Set once the process has exited. */
  end: StdioEnd | undefined;
  /** The first protocol problem seen on stdout, if any. */
  protocolError: Error | undefined;

  private readonly graceMs: number;

  constructor(private readonly options: StdioServerOptions) {
    this.graceMs = options.killGraceMs ?? killGraceMs();
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last stderr lines, joined with "\n" ("" when none). */
  stderrTail(): string {
    const lines = this.stderrPending.trim() ? [...this.tail, this.stderrPending] : this.tail;
    return lines.slice(-TAIL_LINES).join("\n");
  }

  /** Spawns the server; resolves once it runs. A second call (the SDK's connect) does nothing. */
  start(): Promise<void> {
    if (this.child) return Promise.resolve();
    const [file, ...args] = this.options.command;
    // node's spawn, not execa: the pipes are read live for JSON-RPC, the group is ended by
    // endProcessGroup, and the server starts without waiting for execa to load.
    const child = spawn(file, args, {
      cwd: this.options.cwd,
      env: this.options.env,
      detached: true,
      shell: false,
      stdio: ["pipe", "pipe", "pipe"],
      windowsHide: true,
    });
    this.child = child;
    if (child.pid !== undefined) trackProcessGroup(child.pid);
    this.exited = new Promise((resolve) => {
      child.once("close", (exitCode, signal) => {
        this.end = { exitCode, signal };
        resolve(this.end);
        // The server is gone by itself: end what is left of its group (an npx-launched child).
        if (!this.closing && child.pid !== undefined) void endProcessGroup(child.pid, this.graceMs);
        this.finish();
      });
    });
    child.stdout.on("data", (chunk: Buffer) => this.onStdout(chunk));
    child.stderr.on("data", (chunk: Buffer) => this.onStderr(chunk));
    // A server that exits while we write gets EPIPE: reported through its exit, not as a crash.
    child.stdin.on("error", () => {});
    return new Promise((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", (error: NodeJS.ErrnoException) => {
        const reason = spawnFailureText(error.code, file) ?? error.message;
        const failure = new Error(reason);
        (failure as NodeJS.ErrnoException).code = error.code;
        reject(failure);
        this.finish();
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed || stdin.destroyed) return Promise.reject(new Error("the server's stdin is closed"));
    return new Promise((resolve) => {
      if (stdin.write(`${JSON.stringify(message)}\n`)) resolve();
      else stdin.once("drain", () => resolve());
    });
  }

  /** Closes stdin, waits a little for the server to exit, then ends its whole process group. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined) {
      this.finish();
      return;
    }
    const pgid = child.pid;
    this.closing = true;
    if (!child.stdin.destroyed) child.stdin.end();
    if (!this.end) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.exited, new Promise<void>((r) => (timer = setTimeout(r, STDIN_CLOSE_WAIT_MS)))]);
      clearTimeout(timer);
    }
    await endProcessGroup(pgid, this.graceMs);
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }

  private onStdout(chunk: Buffer): void {
    if (this.protocolError) return;
    this.stdoutPending += this.stdoutDecoder.write(chunk);
    let newline: number;
    while ((newline = this.stdoutPending.indexOf("\n")) >= 0) {
      const line = this.stdoutPending.slice(0, newline).replace(/\r$/, "");
      this.stdoutPending = this.stdoutPending.slice(newline + 1);
      if (line.trim() === "") continue;
      const message = parseJsonRpc(line);
      if (!message) {
        this.protocolFailure(`the server wrote a line that is not a JSON-RPC message to stdout (stdout is for MCP messages only; logs belong on stderr): ${JSON.stringify(cut(line, 200))}`);
        return;
      }
      this.onmessage?.(message);
      if (this.protocolError) return;
    }
    if (this.stdoutPending.length > MAX_MESSAGE_CHARS) this.protocolFailure(`the server wrote more than ${MAX_MESSAGE_CHARS} characters to stdout without a line break`);
  }

  private protocolFailure(message: string): void {
    this.protocolError = new Error(message);
    this.onerror?.(this.protocolError);
    void this.close();
  }

  private onStderr(chunk: Buffer): void {
    this.stderrPending += this.stderrDecoder.write(chunk);
    let newline: number;
    while ((newline = this.stderrPending.indexOf("\n")) >= 0) {
      this.keep(this.stderrPending.slice(0, newline));
      this.stderrPending = this.stderrPending.slice(newline + 1);
    }
    if (this.stderrPending.length > MAX_TAIL_LINE_CHARS) {
      this.keep(this.stderrPending);
      this.stderrPending = "";
    }
  }

  private keep(raw: string): void {
    const line = cut(raw.replace(/\r$/, ""), MAX_TAIL_LINE_CHARS);
    if (line.trim() === "") return;
    this.tail.push(line);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
  }
}

/** A JSON-RPC 2.0 message (request, notification or response), or null for anything else. */
function parseJsonRpc(line: string): JSONRPCMessage | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return null;
  const m = value as Record<string, unknown>;
  if (m.jsonrpc !== "2.0") return null;
  const isCall = typeof m.method === "string";
  const isResponse = (typeof m.id === "string" || typeof m.id === "number") && ("result" in m || "error" in m);
  return isCall || isResponse ? (value as JSONRPCMessage) : null;
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)} [… cut]` : text;
}
