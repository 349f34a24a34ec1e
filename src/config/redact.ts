/**
 * Secret-free views of a resolved spec (`yiem config`, `--dry-run`) and of messages.
 * Rules: the API key is shown as `*** (from VAR)` or null; the value of every secret environment
 * variable (`isSecretVariable`: a secret-looking name, a credential carrier, or a URL with a
 * password) is replaced by `***` wherever it appears inside a string (values shorter than 6
 * characters are only hidden in the apiKey field: they would match ordinary text).
 */
import type { ResolvedSpec } from "./types.js";
import { secretValues } from "../secrets.js";
import { createRedactor } from "../redact.js";

const secretsBySpec = new WeakMap<object, string[]>();

/** Remember which secrets to hide for a spec (the loader calls this with its env). */
export function attachSecrets(spec: ResolvedSpec, secrets: string[]): void {
  secretsBySpec.set(spec, secrets);
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
    strict: spec.strict,
    sessions: spec.sessions,
    sources: spec.sources,
    // Header values are credentials more often than not (Authorization: Bearer …): never shown.
    mcpServers: (spec.mcpServers ?? []).map((server) =>
      server.headers ? { ...server, headers: Object.fromEntries(Object.keys(server.headers).map((name) => [name, "***"])) } : server),
  };
  return createRedactor(secrets)(view) as object;
}
