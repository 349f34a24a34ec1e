/**
 * Secret-free views of a resolved spec (`yiem config`, `--dry-run`) and of messages.
 * Rules: the API key is shown as `*** (from VAR)` or null; the value of every environment
 * variable whose name looks secret (KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL) is
 * replaced by `***` wherever it appears inside a string (values shorter than 6 characters are
 * only hidden in the apiKey field: they would match ordinary text).
 */
import type { ResolvedSpec } from "./types.js";

export const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL/i;
/** Shorter values of secret-named variables are too likely to match ordinary text. */
const MIN_SECRET_LENGTH = 6;

const secretsBySpec = new WeakMap<object, string[]>();

/** The values to hide: secret-named variables of `env` plus `extra` (e.g. the API key), longest first. */
export function secretValues(env: NodeJS.ProcessEnv, extra: (string | undefined)[] = []): string[] {
  const fromEnv = Object.entries(env)
    .filter(([name, value]) => SECRET_NAME.test(name) && value && value.length >= MIN_SECRET_LENGTH)
    .map(([, value]) => value as string);
  const all = [...fromEnv, ...extra.filter((value): value is string => !!value && value.length >= MIN_SECRET_LENGTH)];
  return [...new Set(all)].sort((a, b) => b.length - a.length);
}

/** `text` with every secret replaced by `***`. */
export function redactText(text: string, secrets: string[]): string {
  let result = text;
  for (const secret of secrets) result = result.split(secret).join("***");
  return result;
}

/** Remember which secrets to hide for a spec (the loader calls this with its env). */
export function attachSecrets(spec: ResolvedSpec, secrets: string[]): void {
  secretsBySpec.set(spec, secrets);
}

function redactDeep(value: unknown, secrets: string[]): unknown {
  if (typeof value === "string") return redactText(value, secrets);
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, secrets));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactDeep(item, secrets)]));
  }
  return value;
}

/**
 * A plain JSON view of `spec` with secrets hidden. Secrets come from the environment the spec
 * was loaded with (or `env`, default process.env, for a spec built elsewhere) and the API key.
 */
export function redactSpec(spec: ResolvedSpec, env: NodeJS.ProcessEnv = process.env): object {
  const { apiKey, ...model } = { ...spec.model, apiKey: spec.model.apiKey };
  const secrets = [...(secretsBySpec.get(spec) ?? secretValues(env)), ...secretValues({}, [apiKey])];
  const view = {
    configPath: spec.configPath,
    name: spec.name,
    systemPrompt: spec.systemPrompt,
    model: { ...model, apiKey: apiKey ? `*** (from ${spec.model.apiKeyEnv})` : null },
    toolDirs: spec.toolDirs,
    builtinTools: spec.builtinTools,
    writeToolDir: spec.writeToolDir,
    toolExecution: spec.toolExecution,
    tools: spec.tools,
    limits: spec.limits,
    hooks: spec.hooks,
    sources: spec.sources,
  };
  return redactDeep(view, secrets.sort((a, b) => b.length - a.length)) as object;
}
