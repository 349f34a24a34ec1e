/**
 * The stdio channel of `yiem mcp serve`: newline-delimited JSON-RPC on stdin and stdout, as an
 * MCP SDK `Transport`. Rules:
 * - it starts reading stdin before the SDK is loaded (importing the SDK costs several times a
 *   `yiem --version`); messages that arrive meanwhile are queued and handed on, in order, once
 *   the SDK server connects;
 * - a 2025-era `initialize` (no 2026-07-28 envelope claim) is answered at once from
 *   `initializeAnswer`, which negotiates exactly as the SDK's server does (the same supported
 *   versions, capabilities and serverInfo; test/mcp/serve-wire.test.ts compares the two). The SDK
 *   still receives that initialize, so its state is the same; its own answer to it is dropped;
 * - only this wire writes stdout, through `ownWrite` (../../channels/guard.ts): anything else
 *   written there (a tool's console.log) is captured by the guard and never reaches the client;
 * - a line that is not JSON is reported through `onerror` and skipped; a line longer than
 *   MAX_LINE_BYTES is dropped whole (reported once per line);
 * - stdin's end (EOF, or an error) closes the wire once: `onclose` fires, and `onEnd` callbacks too.
 */
import { ownWrite } from "../../channels/guard.js";

/** A JSON-RPC message as the wire sees it (the SDK checks the shape). */
export type WireMessage = Record<string, unknown>;

/** The protocol versions of the 2025 era the SDK server negotiates, newest first (its SUPPORTED_PROTOCOL_VERSIONS). */
export const LEGACY_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"] as const;

/** A line (one message) longer than this is dropped. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

const ENVELOPE_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";

export interface ServerIdentity {
  serverInfo: { name: string; version: string };
  capabilities: Record<string, unknown>;
}

/** The SDK server's answer to a 2025-era `initialize` requesting `requested`. */
export function initializeAnswer(requested: unknown, identity: ServerIdentity): Record<string, unknown> {
  const protocolVersion = (LEGACY_PROTOCOL_VERSIONS as readonly unknown[]).includes(requested) ? (requested as string) : LEGACY_PROTOCOL_VERSIONS[0];
  return { protocolVersion, capabilities: identity.capabilities, serverInfo: identity.serverInfo };
}

export class StdioWire {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: WireMessage) => void;

  private readonly queue: WireMessage[] = [];
  private readonly endCallbacks: Array<() => void> = [];
  private pending = "";
  private pendingBytes = 0;
  private dropping = false;
  private connected = false;
  private closed = false;
  /** The id of the initialize answered early, and that answer (the SDK's own is dropped). */
  private answered: { id: unknown; result: Record<string, unknown> } | undefined;

  constructor(
    private readonly identity: ServerIdentity,
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
  ) {
    input.setEncoding?.("utf8");
    input.on("data", this.onData);
    input.on("end", this.end);
    input.on("close", this.end);
    input.on("error", (error: Error) => {
      this.onerror?.(error);
      this.end();
    });
    output.on("error", (error: Error) => {
      this.onerror?.(error);
      this.end();
    });
  }

  /** True once stdin has ended (or the wire was closed). */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Called once when the wire closes (stdin EOF or close()). */
  onEnd(callback: () => void): void {
    if (this.closed) callback();
    else this.endCallbacks.push(callback);
  }

  /** The SDK connects: queued messages are handed on in order. */
  async start(): Promise<void> {
    this.connected = true;
    for (const message of this.queue.splice(0)) this.onmessage?.(message);
    if (this.closed) this.onclose?.();
  }

  async send(message: WireMessage): Promise<void> {
    if (this.closed) throw new Error("the stdio channel is closed");
    if (this.answered && "result" in message && message.id === this.answered.id) {
      const early = JSON.stringify(this.answered.result);
      this.answered = undefined;
      if (JSON.stringify(message.result) !== early) this.onerror?.(new Error(`the early initialize answer ${early} differs from the SDK's ${JSON.stringify(message.result)}`));
      return;
    }
    this.write(message);
  }

  async close(): Promise<void> {
    this.end();
  }

  private write(message: WireMessage): void {
    const line = `${JSON.stringify(message)}\n`;
    ownWrite(() => this.output.write(line));
  }

  private readonly onData = (chunk: string | Buffer) => {
    let text = typeof chunk === "string" ? chunk : chunk.toString("utf8");
    let newline = text.indexOf("\n");
    while (newline >= 0) {
      const line = this.dropping ? "" : this.pending + text.slice(0, newline);
      const wasDropping = this.dropping;
      this.pending = "";
      this.pendingBytes = 0;
      this.dropping = false;
      if (!wasDropping) this.receiveLine(line);
      text = text.slice(newline + 1);
      newline = text.indexOf("\n");
    }
    if (this.dropping) return;
    this.pending += text;
    this.pendingBytes += text.length;
    if (this.pendingBytes > MAX_LINE_BYTES) {
      this.onerror?.(new Error(`a message on stdin is longer than ${MAX_LINE_BYTES} bytes: dropped`));
      this.pending = "";
      this.pendingBytes = 0;
      this.dropping = true;
    }
  };

  private receiveLine(raw: string): void {
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.onerror?.(new Error(`a line on stdin is not JSON: ${line.slice(0, 200)}`));
      return;
    }
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      this.onerror?.(new Error(`a line on stdin is not a JSON-RPC message: ${line.slice(0, 200)}`));
      return;
    }
    const msg = message as WireMessage;
    if (!this.connected) {
      this.answerEarly(msg);
      this.queue.push(msg);
      return;
    }
    this.onmessage?.(msg);
  }

  /** Answers a 2025-era initialize that arrives before the SDK is loaded (see the rules above). */
  private answerEarly(message: WireMessage): void {
    if (message.method !== "initialize" || message.id === undefined || this.answered || this.queue.length > 0) return;
    const params = message.params as { protocolVersion?: unknown; _meta?: Record<string, unknown> } | undefined;
    if (typeof params?.protocolVersion !== "string" || params._meta?.[ENVELOPE_VERSION_KEY] !== undefined) return;
    const result = initializeAnswer(params.protocolVersion, this.identity);
    this.answered = { id: message.id, result };
    this.write({ jsonrpc: "2.0", id: message.id, result });
  }

  private readonly end = () => {
    if (this.closed) return;
    this.closed = true;
    this.input.removeListener("data", this.onData);
    (this.input as { pause?: () => void }).pause?.();
    if (this.connected) this.onclose?.();
    for (const callback of this.endCallbacks.splice(0)) callback();
  };
}
