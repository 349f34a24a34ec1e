/**
 * `loadSpec`: find (or take `-c`) the spec file, interpolate `${VAR}`, validate against
 * schema/agent.schema.json, then resolve flags > environment > spec > defaults.
 * Every problem is found in one load and thrown as one ConfigError (./problems.ts), each problem
 * naming file, line and key where known; secret values from the environment never appear in it.
 * Rules: docs/spec.md.
 */
import path from "node:path";
import { findSpecFile, readSpecFile } from "./discover.js";
import { cacheScopeOf } from "../cache-dir.js";
import { ConfigError, fileError } from "./errors.js";
import { interpolateValue } from "../interpolate.js";
import { checkApiKey } from "./model.js";
import { SpecProblems } from "./problems.js";
import type { ParsedSpecFile } from "./parse.js";
import type { SpecPath } from "../interpolate.js";
import { attachSecrets } from "./redact.js";
import { redactText } from "../redact.js";
import { secretValues } from "../secrets.js";
import { resolveSpec } from "./resolve.js";
import { SOURCE_KEYS, type AgentSpec, type LoadSpecOptions, type ResolvedSpec, type SpecSet } from "./types.js";
import { formatKey, validateSpec, type ValidateOptions } from "./validate.js";
import { applySets, flagOf, type AppliedSet } from "./flag-sets.js";


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
  const problems = new SpecProblems();
  for (const message of opts.commandLineProblems ?? []) problems.add(new ConfigError(message));
  let parsed: ParsedSpecFile | null | undefined = null;
  let specValue: unknown;
  const sets = opts.overrides.sets ?? [];
  let applied: AppliedSet[] = [];
  try {
    // The spec cache and the search's home are the caller's (opts.env), never the process's.
    const cache = { scope: cacheScopeOf(opts.env, cwd), read: useCache };
    parsed = await problems.check(() => (opts.configPath ? readSpecFile(opts.configPath, cwd, cache) : findSpecFile(cwd, { home: cache.scope.home, cache })));
    specValue = parsed?.value;
    let spec: AgentSpec = {};
    if (parsed || sets.length) {
      // Without a spec file, the flags' values are checked as a spec of their own.
      const checked = await checkedSpec(parsed ?? { file: path.join(cwd, "(flags)"), value: null, lineOf: () => undefined }, opts.env, cwd, problems, sets);
      spec = checked.spec;
      applied = checked.applied;
      specValue = checked.value;
    }
    const requireModel = opts.requireModel ?? true;
    const resolved = await resolveSpec({
      spec,
      parsed: parsed ?? null,
      cwd,
      env: opts.env,
      overrides: opts.overrides,
      flagOf: (specPath) => flagOf(applied, specPath),
      // A spec file that could not be read may well name the model: "no model" would mislead.
      requireModel: requireModel && parsed !== undefined,
      problems,
    });
    // The key is asked for last, when nothing else is wrong (see checkApiKey).
    const missingKey = requireModel && problems.empty ? checkApiKey(resolved.model) : undefined;
    if (missingKey) problems.add(missingKey);
    problems.throwIfAny();
    for (const key of SOURCE_KEYS) {
      const paths = key === "systemPrompt" ? [["systemPrompt"], ["systemPromptFile"]] : [key.split(".")];
      if (resolved.sources[key] === "spec" && paths.some((p) => flagOf(applied, p))) resolved.sources[key] = "flag";
    }
    attachSecrets(resolved, secretValues(opts.env, [resolved.model.apiKey]));
    return resolved;
  } catch (error) {
    const wrapped =
      error instanceof ConfigError
        ? error
        : new ConfigError(`cannot load the spec: ${(error as Error).message}`, {}, { cause: error });
    // The key's variable is secret whatever its name (`apiKeyEnv: LLM_API`).
    const keyVariable = apiKeyVariable(specValue);
    const hidden = keyVariable ? secretValues(opts.env, [opts.env[keyVariable]]) : secrets;
    wrapped.message = redactText(wrapped.message, hidden);
    for (const one of wrapped.problems ?? []) one.message = redactText(one.message, hidden);
    if (parsed?.cached) wrapped.fromCache = true;
    throw wrapped;
  }
}

/**
 * The spec of `parsed`, interpolated and checked against the schema; `{}` for an empty file.
 * Every bad value is a problem and is set aside (./problems.ts), so the rest is still resolved.
 */
async function checkedSpec(
  parsed: ParsedSpecFile,
  env: NodeJS.ProcessEnv,
  cwd: string,
  problems: SpecProblems,
  sets: SpecSet[],
): Promise<{ spec: AgentSpec; value: unknown; applied: AppliedSet[] }> {
  if (parsed.value === null && sets.length === 0) return { spec: {}, value: null, applied: [] };
  const interpolated = parsed.value === null ? null : interpolateValue(parsed.value, env, [], (error) => {
    const key = formatKey(error.specPath);
    problems.add(fileError(`"${key}": ${error.message}`, { file: parsed.file, line: parsed.lineOf(error.specPath), key, specPath: error.specPath, cwd }), true);
  });
  // Flag values are not interpolated: the shell has done that.
  const { value, applied, createdModel } = sets.length
    ? await applySets(interpolated, sets, cwd, problems)
    : { value: interpolated, applied: [], createdModel: false };
  const options: ValidateOptions = {
    cache: cacheScopeOf(env, cwd),
    flagOf: (specPath) => flagOf(applied, specPath),
    ignore: (error) => createdModel && error.keyword === "required" && error.instancePath === "/model",
  };
  const spec = await validatedSpec(value, parsed, cwd, problems, options, (error) => (error.file ? -1 : applied.findIndex((set) => set.flag === error.key)));
  return { spec, value, applied };
}

/** The file's errors (in line order) first, then the flags' in command-line order. */
function ordered(errors: ConfigError[], order: (error: ConfigError) => number): ConfigError[] {
  return errors.map((error, i) => ({ error, i })).sort((a, b) => order(a.error) - order(b.error) || a.i - b.i).map(({ error }) => error);
}

async function validatedSpec(
  value: unknown,
  parsed: ParsedSpecFile,
  cwd: string,
  problems: SpecProblems,
  options: ValidateOptions,
  order: (error: ConfigError) => number,
): Promise<AgentSpec> {
  if (value === null) return {};
  for (const error of ordered(await validateSpec(value, parsed, cwd, options), order)) problems.add(error, true);
  if (problems.pruned.length === 0) return value as AgentSpec;
  // What is left may still break the schema (a model object without its bad name): set that
  // aside too, without reporting it, until it is valid.
  let rest = pruneSpec(value, problems.pruned);
  for (let round = 0; round < 4 && rest !== null; round++) {
    const more = await validateSpec(rest, parsed, cwd, options);
    if (more.length === 0) break;
    for (const error of more) if (error.specPath) problems.pruned.push(error.specPath);
    rest = pruneSpec(value, problems.pruned);
  }
  return (rest ?? {}) as AgentSpec;
}

/**
 * A copy of `value` without the keys at `paths`. A bad list item takes its whole list with it
 * (the other items' indexes, and so their messages, must stay right). Null when the root goes.
 */
export function pruneSpec(value: unknown, paths: SpecPath[]): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  for (const full of paths) {
    const list = full.findIndex((part) => typeof part === "number");
    const at = list < 0 ? full : full.slice(0, list);
    if (at.length === 0) return null;
    let parent: unknown = copy;
    for (const part of at.slice(0, -1)) parent = parent && typeof parent === "object" ? (parent as Record<string, unknown>)[part] : undefined;
    if (parent && typeof parent === "object" && !Array.isArray(parent)) delete (parent as Record<string, unknown>)[at.at(-1)!];
  }
  return copy;
}

/** The variable the raw spec `value` names as `model.apiKeyEnv`, if any. */
function apiKeyVariable(value: unknown): string | undefined {
  const model = (value as { model?: unknown } | null | undefined)?.model;
  const name = model !== null && typeof model === "object" ? (model as { apiKeyEnv?: unknown }).apiKeyEnv : undefined;
  return typeof name === "string" && name !== "" ? name : undefined;
}
