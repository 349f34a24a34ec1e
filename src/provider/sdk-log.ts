/**
 * The openai package's own log lines (its `logger` option; its level is `OPENAI_LOG`, see
 * ./openai-client.ts). Rules:
 * - the package is always given a logger, so it never writes to the global `console` (which
 *   would reach stdout, or be blamed on tool code by the channel guard);
 * - each call of that logger is one {@link SdkLogLine}: the call's level and its arguments as one
 *   string (strings as they are, other values as `util.inspect` shows them on one line, depth
 *   limited, with bytes shown as their UTF-8 text), cut to SDK_LOG_MAX_CHARS (a cut never splits
 *   a secret, ../redact.ts) and with the provider's key redacted;
 * - a line goes to the `onSdkLog` of the model request being served when the package logs it:
 *   a provider serves one run's requests one at a time (one provider per run: `yiem run`, each
 *   batch item, each `mcp serve --agent` call), so that is exact; with several requests of one
 *   provider in flight (a library caller sharing it), a line goes to the latest started of them.
 *   A line logged while no request is served, or for a request without `onSdkLog`, is dropped,
 *   never printed. The loop makes each line a `debug` event of kind `sdk` (../loop/run-agent.ts).
 *   (Not an AsyncLocalStorage: on Node 20 an active one slows every promise of the process.)
 */
import { inspect } from "node:util";
import { cutText } from "../redact.js";

/** The package's levels that log (`off` logs nothing). */
export type SdkLogLevel = "error" | "warn" | "info" | "debug";

export interface SdkLogLine {
  level: SdkLogLevel;
  /** The call's arguments as one string (see module rules). */
  message: string;
}

/** A line's message is cut to this many characters. */
export const SDK_LOG_MAX_CHARS = 4_000;
/** How deep an object argument is shown. */
const INSPECT_DEPTH = 4;
/** An object argument on one line, depth and size limited. */
const INSPECT_OPTIONS = { depth: INSPECT_DEPTH, breakLength: Infinity, compact: Infinity, maxStringLength: SDK_LOG_MAX_CHARS, maxArrayLength: 50 };

/** The logger the package is given, with the package's four levels. */
export type SdkLogger = Record<SdkLogLevel, (message: string, ...rest: unknown[]) => void>;

export interface SdkLogRouting {
  logger: SdkLogger;
  /** Runs `serve` with the package's lines going to `onSdkLog` (see module rules). */
  during<T>(onSdkLog: ((line: SdkLogLine) => void) | undefined, serve: () => Promise<T>): Promise<T>;
}

/** `value` with bytes as text, plain objects and arrays copied down to INSPECT_DEPTH; anything else as it is. */
function readable(value: unknown, depth: number): unknown {
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  if (depth >= INSPECT_DEPTH || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => readable(item, depth + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, readable(item, depth + 1)]));
}

/** The arguments of one logger call as one string (see module rules). */
export function formatSdkLogArgs(args: readonly unknown[]): string {
  const text = args.map((arg) => (typeof arg === "string" ? arg : inspect(readable(arg, 0), INSPECT_OPTIONS))).join(" ");
  return cutText(text, SDK_LOG_MAX_CHARS, (n) => `… [${n} more characters]`);
}

/** A logger for one provider's client, its lines routed per request; `redact` hides the provider's key. */
export function createSdkLogRouting(redact: (text: string) => string): SdkLogRouting {
  /** The requests being served, latest started last (undefined: a request without `onSdkLog`). */
  const serving: Array<((line: SdkLogLine) => void) | undefined> = [];
  const at = (level: SdkLogLevel) => (...args: unknown[]) => {
    const onSdkLog = serving.at(-1);
    if (!onSdkLog) return;
    try {
      onSdkLog({ level, message: redact(formatSdkLogArgs(args)) });
    } catch {
      // a log line must never break a request
    }
  };
  return {
    logger: { error: at("error"), warn: at("warn"), info: at("info"), debug: at("debug") },
    async during(onSdkLog, serve) {
      serving.push(onSdkLog);
      try {
        return await serve();
      } finally {
        serving.splice(serving.lastIndexOf(onSdkLog), 1);
      }
    },
  };
}
