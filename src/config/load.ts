/**
 * `loadSpec`: find (or take `-c`) the spec file, interpolate `${VAR}`, validate against
 * schema/agent.schema.json, then resolve flags > environment > spec > defaults.
 * Every failure is a ConfigError with one message naming file, line and key where known;
 * secret values from the environment never appear in it. Rules: docs/spec.md.
 */
import path from "node:path";
import { findSpecFile, readSpecFile } from "./discover.js";
import { ConfigError, fileError } from "./errors.js";
import { InterpolationError, interpolateValue } from "./interpolate.js";
import type { ParsedSpecFile } from "./parse.js";
import { attachSecrets, redactText, secretValues } from "./redact.js";
import { resolveSpec } from "./resolve.js";
import type { AgentSpec, LoadSpecOptions, ResolvedSpec } from "./types.js";
import { formatKey, validateSpec } from "./validate.js";

export { ConfigError } from "./errors.js";
export { parseDuration } from "./duration.js";
export type { AgentSpec, LoadSpecOptions, ResolvedSpec, SpecOverrides } from "./types.js";

export async function loadSpec(opts: LoadSpecOptions): Promise<ResolvedSpec> {
  try {
    return await loadSpecOnce(opts, true);
  } catch (error) {
    // A spec from the cache has no line map: load it again without the cache, so the error
    // names its line (or, if the cache was stale, the load now succeeds).
    if (error instanceof ConfigError && error.fromCache) return loadSpecOnce(opts, false);
    throw error;
  }
}

async function loadSpecOnce(opts: LoadSpecOptions, useCache: boolean): Promise<ResolvedSpec> {
  const cwd = path.resolve(opts.cwd);
  const secrets = secretValues(opts.env);
  let parsed: ParsedSpecFile | null = null;
  try {
    parsed = opts.configPath ? await readSpecFile(opts.configPath, cwd, useCache) : await findSpecFile(cwd, useCache);
    const spec = parsed ? await checkedSpec(parsed, opts.env, cwd) : {};
    const resolved = await resolveSpec({
      spec,
      parsed,
      cwd,
      env: opts.env,
      overrides: opts.overrides,
      requireModel: opts.requireModel ?? true,
    });
    attachSecrets(resolved, secretValues(opts.env, [resolved.model.apiKey]));
    return resolved;
  } catch (error) {
    const wrapped =
      error instanceof ConfigError
        ? error
        : new ConfigError(`cannot load the spec: ${(error as Error).message}`, {}, { cause: error });
    // The key's variable is secret whatever its name (`apiKeyEnv: LLM_API`).
    const keyVariable = apiKeyVariable(parsed?.value);
    wrapped.message = redactText(wrapped.message, keyVariable ? secretValues(opts.env, [opts.env[keyVariable]]) : secrets);
    if (parsed?.cached) wrapped.fromCache = true;
    throw wrapped;
  }
}

/** The spec of `parsed`, interpolated and validated; `{}` for an empty file. */
async function checkedSpec(parsed: ParsedSpecFile, env: NodeJS.ProcessEnv, cwd: string): Promise<AgentSpec> {
  if (parsed.value === null) return {};
  let value: unknown;
  try {
    value = interpolateValue(parsed.value, env);
  } catch (error) {
    if (!(error instanceof InterpolationError)) throw error;
    const key = formatKey(error.specPath);
    throw fileError(`"${key}": ${error.message}`, { file: parsed.file, line: parsed.lineOf(error.specPath), key, cwd });
  }
  await validateSpec(value, parsed, cwd);
  return value as AgentSpec;
}

/** The variable the raw spec `value` names as `model.apiKeyEnv`, if any. */
function apiKeyVariable(value: unknown): string | undefined {
  const model = (value as { model?: unknown } | null | undefined)?.model;
  const name = model !== null && typeof model === "object" ? (model as { apiKeyEnv?: unknown }).apiKeyEnv : undefined;
  return typeof name === "string" && name !== "" ? name : undefined;
}
