/**
 * The `openai` package's client for one provider, with every setting the package would otherwise
 * read from the process's environment given explicitly, from the caller's `env`. Rules:
 * - the package reads `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `OPENAI_ADMIN_KEY`, `OPENAI_ORG_ID`,
 *   `OPENAI_PROJECT_ID`, `OPENAI_WEBHOOK_SECRET` and `OPENAI_LOG` for an option left undefined,
 *   and `OPENAI_CUSTOM_HEADERS` always (node_modules/openai/client.*): here no option is left
 *   undefined, and the custom headers the package took from the process are replaced by those of
 *   `env`, so nothing of the process's environment reaches a request the caller's `env` did not hold;
 * - from `env`, as the package would read them (trimmed, blank is unset): the organization and
 *   project headers (`OPENAI_ORG_ID`, `OPENAI_PROJECT_ID`), extra headers (`OPENAI_CUSTOM_HEADERS`,
 *   one `name: value` a line, under the client's own headers) and the log level (`OPENAI_LOG`, one
 *   of the package's levels, else its default `warn`, said as a warn line on the logger); the
 *   admin key and webhook secret are never used by Chat Completions and are not set;
 * - the package is given `logger` (./sdk-log.ts), so it never logs to the global `console`.
 * The package is imported on the first call (a provider that never sends loads nothing).
 */
import type OpenAI from "openai";
import type { SdkLogger } from "./sdk-log.js";

/** What the provider decides itself; the rest comes from `env` (see module rules). */
export interface SdkClientSettings {
  /** The key sent (a placeholder when none is set: the package refuses a client without one). */
  apiKey: string;
  baseURL: string;
  timeout: number;
  /** The client's own headers (they win over `OPENAI_CUSTOM_HEADERS`). */
  headers: Record<string, string>;
  fetch: typeof globalThis.fetch | undefined;
  /** Where the package's log lines go, at the level `OPENAI_LOG` of `env` sets (./sdk-log.ts). */
  logger: SdkLogger;
  /** The caller's environment (the CLI's io.env). */
  env: NodeJS.ProcessEnv;
}

const LOG_LEVELS = ["off", "error", "warn", "info", "debug"] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

/** A variable as the package reads one: trimmed, and blank is unset. */
function readVar(env: NodeJS.ProcessEnv, name: string): string | undefined {
  return env[name]?.trim() || undefined;
}

/** `OPENAI_CUSTOM_HEADERS` of `env` as the package parses it: `name: value` a line, other lines ignored. */
export function customHeadersOf(env: NodeJS.ProcessEnv): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of (readVar(env, "OPENAI_CUSTOM_HEADERS") ?? "").split("\n")) {
    const colon = line.indexOf(":");
    if (colon >= 0) headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** `OPENAI_LOG` of `env`; an unknown level is `warn`, said on `logger` as the package says it. */
function logLevelOf(env: NodeJS.ProcessEnv, logger: SdkLogger): LogLevel {
  const level = readVar(env, "OPENAI_LOG");
  const known = LOG_LEVELS.find((name) => name === level);
  if (level !== undefined && !known) logger.warn(`OPENAI_LOG was set to ${JSON.stringify(level)}, expected one of ${JSON.stringify(LOG_LEVELS)}; the level is "warn"`);
  return known ?? "warn";
}

/** The client of `settings` (see module rules). */
export async function createSdkClient(settings: SdkClientSettings): Promise<OpenAI> {
  const { default: OpenAIClient } = await import("openai");
  const defaultHeaders = { ...customHeadersOf(settings.env), ...settings.headers };
  /** The package's client with its default headers exactly `defaultHeaders` (its constructor adds the process's custom headers). */
  class CallClient extends OpenAIClient {
    constructor(options: ConstructorParameters<typeof OpenAIClient>[0]) {
      super(options);
      this._options = { ...this._options, defaultHeaders };
    }
  }
  // The package names its User-Agent after the client's class (`OpenAI/JS <version>`): keep its name.
  Object.defineProperty(CallClient, "name", { value: OpenAIClient.name });
  return new CallClient({
    apiKey: settings.apiKey,
    baseURL: settings.baseURL,
    adminAPIKey: null,
    organization: readVar(settings.env, "OPENAI_ORG_ID") ?? null,
    project: readVar(settings.env, "OPENAI_PROJECT_ID") ?? null,
    webhookSecret: null,
    logLevel: logLevelOf(settings.env, settings.logger),
    logger: settings.logger,
    maxRetries: 0,
    timeout: settings.timeout,
    defaultHeaders,
    fetch: settings.fetch,
  });
}
