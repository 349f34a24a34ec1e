/**
 * Resolving the `model` section. Precedence per field: flag > environment > spec > default.
 * Model names: `replay:FILE` is the offline model (the file must exist). A name only counts as
 * having a scheme when it looks like `scheme:path` (lowercase scheme, then something path-like:
 * `/`, `./`, `../`, `~`, a `/` anywhere, or a data-file extension); any such scheme other than
 * `replay` is an error. Every other name, colons included (`llama3.1:8b`, `qwen:7b`,
 * `org/model:free`), is passed to the server as is.
 * API key: env[apiKeyEnv]; missing is an error only for api.openai.com (the default base URL),
 * and it is checked last, only when nothing else is wrong (`checkApiKey`): a fix elsewhere (a
 * `baseURL` pointing at a local server) may make it unneeded.
 * Every problem goes to `problems`; the value at fault falls back to its default.
 */
import { statSync, type Stats } from "node:fs";
import path from "node:path";
import { fileKind } from "../regular-file.js";
import { parseDuration } from "./duration.js";
import { ConfigError } from "./errors.js";
import type { SpecPath } from "../interpolate.js";
import type { SpecProblems } from "./problems.js";
import {
  DEFAULT_API_KEY_ENV,
  DEFAULT_MODEL_SETTINGS,
  type AgentSpec,
  type ModelSpec,
  type ResolvedModel,
  type SourceKey,
  type SpecOverrides,
  type ValueSource,
} from "./types.js";

export const KNOWN_MODEL_SCHEMES = ["replay"] as const;
export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

const SCHEMED = /^([a-z][a-z0-9+.-]*):(.*)$/s;
const PATH_LIKE = /^(\/|\.\.?\/|~)|\/|\\|\.(jsonl|ndjson|json|ya?ml|txt)$/i;

export type ModelScheme = { scheme: "replay"; file: string } | { scheme: null };

/** Classify a model name; throws a plain Error (message without location) for an unknown scheme. */
export function parseModelName(name: string): ModelScheme {
  const match = SCHEMED.exec(name);
  if (!match) return { scheme: null };
  const [, scheme, rest] = match;
  if (scheme === "replay") {
    if (!rest.trim()) throw new Error(`"replay:" needs a file, e.g. replay:runs/demo.jsonl`);
    return { scheme: "replay", file: rest };
  }
  if (PATH_LIKE.test(rest)) {
    throw new Error(
      `unknown model scheme "${scheme}:" in ${JSON.stringify(name)} (known: replay:FILE; ` +
        `plain names like gpt-4o-mini or llama3.1:8b need no scheme)`,
    );
  }
  return { scheme: null };
}

/** True when requests go to api.openai.com, which needs a key (local servers do not). */
export function needsApiKey(baseURL: string | undefined): boolean {
  if (!baseURL) return true;
  try {
    return new URL(baseURL).hostname === "api.openai.com";
  } catch {
    return false;
  }
}

export interface ModelContext {
  cwd: string;
  baseDir: string;
  env: NodeJS.ProcessEnv;
  /** Spec file name for messages, or null. */
  configLabel: string | null;
  specError(message: string, specPath: SpecPath): ConfigError;
  problems: SpecProblems;
  /** The flag that set the spec key at a path (`--set model.name=…`): it beats the environment. */
  flagOf(specPath: SpecPath): string | undefined;
}

type Origin = { source: ValueSource; fail: (message: string) => ConfigError; baseDir: string };

export async function resolveModel(
  spec: AgentSpec,
  overrides: SpecOverrides,
  ctx: ModelContext,
  requireModel: boolean,
): Promise<{ model: ResolvedModel; sources: Partial<Record<SourceKey, ValueSource>> }> {
  const specModel: ModelSpec | undefined = typeof spec.model === "string" ? { name: spec.model } : spec.model;
  const namePath: SpecPath = typeof spec.model === "string" ? ["model"] : ["model", "name"];
  const sources: Partial<Record<SourceKey, ValueSource>> = {};
  const has = (value: string | undefined): value is string => typeof value === "string" && value !== "";

  let name = "";
  let origin: Origin | undefined;
  if (has(overrides.model)) {
    name = overrides.model;
    origin = { source: "flag", fail: (m) => new ConfigError(`--model: ${m}`, { key: "--model" }), baseDir: ctx.cwd };
  } else if (has(specModel?.name) && ctx.flagOf(namePath)) {
    name = specModel.name;
    origin = { source: "flag", fail: (m) => ctx.specError(m, namePath), baseDir: ctx.cwd };
  } else if (has(ctx.env.YIEM_MODEL)) {
    name = ctx.env.YIEM_MODEL;
    origin = { source: "env", fail: (m) => new ConfigError(`YIEM_MODEL: ${m}`, { key: "YIEM_MODEL" }), baseDir: ctx.cwd };
  } else if (specModel?.name !== undefined) {
    name = specModel.name;
    origin = { source: "spec", fail: (m) => ctx.specError(m, namePath), baseDir: ctx.baseDir };
  }
  sources["model.name"] = origin?.source ?? "default";

  let replayFile: string | undefined;
  if (origin) {
    const named = origin;
    const replay = await ctx.problems.check(() => replayFileOf(name, named));
    if (replay) {
      replayFile = replay;
      name = `replay:${replayFile}`;
    }
  } else if (requireModel) {
    const where = ctx.configLabel ? `${ctx.configLabel} sets no "model"` : "no spec file was found";
    ctx.problems.add(new ConfigError(`no model: ${where}; pass --model, set YIEM_MODEL, or add "model" to the spec`, {
      key: "model",
      specPath: ["model"],
    }));
  }

  let baseURL: string | undefined;
  if (has(overrides.baseURL)) {
    baseURL = await ctx.problems.check(() => checkURL(overrides.baseURL!, "--base-url"));
    sources["model.baseURL"] = "flag";
  } else if (has(ctx.env.OPENAI_BASE_URL) && !ctx.flagOf(["model", "baseURL"])) {
    baseURL = await ctx.problems.check(() => checkURL(ctx.env.OPENAI_BASE_URL!, "OPENAI_BASE_URL"));
    sources["model.baseURL"] = "env";
  } else {
    baseURL = specModel?.baseURL;
    sources["model.baseURL"] = baseURL === undefined ? "default" : "spec";
  }

  const apiKeyEnv = specModel?.apiKeyEnv ?? DEFAULT_API_KEY_ENV;
  const apiKey = ctx.env[apiKeyEnv] || undefined;
  sources["model.apiKeyEnv"] = specModel?.apiKeyEnv ? "spec" : "default";
  sources["model.apiKey"] = apiKey ? "env" : "default";

  let timeoutMs: number = DEFAULT_MODEL_SETTINGS.timeoutMs;
  if (specModel?.timeoutMs !== undefined) {
    const given = parseDuration(specModel.timeoutMs);
    if (given > 0) timeoutMs = given;
    else ctx.problems.add(ctx.specError(`"model.timeoutMs" must be greater than 0`, ["model", "timeoutMs"]));
  }
  const fromSpec = <T>(key: keyof ModelSpec, value: T | undefined, fallback: T): T => {
    sources[`model.${key}` as SourceKey] = value === undefined ? "default" : "spec";
    return value ?? fallback;
  };
  const model: ResolvedModel = {
    name,
    ...(replayFile ? { replayFile } : {}),
    ...(baseURL !== undefined ? { baseURL } : {}),
    apiKeyEnv,
    ...optional("temperature", fromSpec("temperature", specModel?.temperature, undefined)),
    ...optional("maxTokens", fromSpec("maxTokens", specModel?.maxTokens, undefined)),
    maxTokensField: fromSpec("maxTokensField", specModel?.maxTokensField, "max_tokens" as const),
    stream: fromSpec<"auto" | boolean>("stream", specModel?.stream, DEFAULT_MODEL_SETTINGS.stream),
    streamUsage: fromSpec("streamUsage", specModel?.streamUsage, "auto" as const),
    textToolCalls: fromSpec("textToolCalls", specModel?.textToolCalls, false),
    maxRetries: fromSpec("maxRetries", specModel?.maxRetries, DEFAULT_MODEL_SETTINGS.maxRetries as number),
    timeoutMs: fromSpec("timeoutMs", specModel?.timeoutMs === undefined ? undefined : timeoutMs, timeoutMs),
  };
  sources["model.pricing"] = specModel?.pricing ? "spec" : "default";
  if (specModel?.pricing) model.pricing = { ...specModel.pricing };
  // Non-enumerable: JSON.stringify, spreads and inspection never show the key.
  Object.defineProperty(model, "apiKey", { value: apiKey, enumerable: false, writable: false });
  return { model, sources };
}

/** The absolute replay file of a `replay:FILE` name (undefined for any other name); throws on a bad one. */
async function replayFileOf(name: string, origin: Origin): Promise<string | undefined> {
  let scheme: ModelScheme;
  try {
    scheme = parseModelName(name);
  } catch (error) {
    throw origin.fail((error as Error).message);
  }
  if (scheme.scheme !== "replay") return undefined;
  const file = path.resolve(origin.baseDir, scheme.file);
  // One stat, synchronous: node:fs/promises would load ~20 more of Node's modules for it.
  const found = statOrNull(file);
  if (!found) throw origin.fail(`replay file "${scheme.file}" not found (${file})`);
  if (!found.isFile()) throw origin.fail(`replay file "${scheme.file}" is not a regular file (${fileKind(found)}; ${file})`);
  return file;
}

/**
 * The missing-key error for `model`, when it needs a key it does not have (api.openai.com, not a
 * replay model); undefined when all is well.
 */
export function checkApiKey(model: ResolvedModel): ConfigError | undefined {
  if (model.replayFile || model.apiKey || !needsApiKey(model.baseURL)) return undefined;
  return new ConfigError(
    `${model.apiKeyEnv} is not set: model "${model.name}" at ${model.baseURL ?? DEFAULT_BASE_URL} needs an API key ` +
      `(export ${model.apiKeyEnv}, or point model.baseURL at a local server such as http://localhost:11434/v1)`,
    { key: model.apiKeyEnv },
  );
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

function checkURL(value: string, label: string): string {
  if (!/^https?:\/\//.test(value)) {
    throw new ConfigError(`${label} must be an http(s) URL (got ${JSON.stringify(value)})`, { key: label });
  }
  return value;
}

function statOrNull(file: string): Stats | null {
  try {
    return statSync(file);
  } catch {
    return null;
  }
}
