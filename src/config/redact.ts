/**
 * Secret-free views of a resolved spec (`yiem config`, `--dry-run`) and of messages.
 * Rules: the API key is shown as `*** (from VAR)` or null; the value of every secret environment
 * variable (`isSecretVariable`: a secret-looking name, a credential carrier, or a URL with a
 * password) is replaced by `***` wherever it appears inside a string (values shorter than 6
 * characters are only hidden in the apiKey field: they would match ordinary text).
 */
import type { ResolvedSpec } from "./types.js";

const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL/i;

/**
 * Names that carry credentials without a secret-looking word in them (case-insensitive):
 * connection strings (`DATABASE_URL`, `*_DATABASE_URL`, `*_DSN`, `*_CONNECTION_STRING`), agent
 * sockets that sign for the user (`SSH_AUTH_SOCK`, `GPG_AGENT_INFO`), Kerberos ticket caches
 * (`KRB5CCNAME`), webhook URLs (`*WEBHOOK*`), short password and token suffixes (`*_PWD`,
 * `*_PASS`, `*_PAT`), `*PASSPHRASE*`, cookies (`*COOKIE*`), and `AUTH` as a word of the name
 * (`NPM_AUTH*`, `npm_config__auth`, `DOCKER_AUTH_CONFIG`, `BASIC_AUTH`; not `GIT_AUTHOR_NAME`),
 * `JWT` as a word of the name (GitLab's `CI_JOB_JWT`, `CI_JOB_JWT_V2`), and the credential
 * helpers that answer for the user (`GIT_ASKPASS`, `SSH_ASKPASS`, any `*ASKPASS*`,
 * `VSCODE_GIT_IPC_HANDLE`).
 */
const CREDENTIAL_NAME =
  /^(?:DATABASE_URL|SSH_AUTH_SOCK|GPG_AGENT_INFO|KRB5CCNAME|VSCODE_GIT_IPC_HANDLE)$|_DATABASE_URL$|_DSN$|CONNECTION_STRING|WEBHOOK|_PWD$|_PASS$|_PAT$|PASSPHRASE|COOKIE|ASKPASS|^NPM_AUTH|(?:^|_)AUTH(?:_|$)|(?:^|_)JWT(?:_|$)/i;

/** A URL with a password in it (`scheme://user:pass@host`, `redis://:pass@host`), anywhere in a value. */
const URL_WITH_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:[^\s/@]+@/i;

/** A secret variable: its value is hidden in output and withheld from child processes. */
export function isSecretVariable(name: string, value: string | undefined): boolean {
  return SECRET_NAME.test(name) || CREDENTIAL_NAME.test(name) || (value !== undefined && URL_WITH_PASSWORD.test(value));
}
/** Shorter values of secret-named variables are too likely to match ordinary text. */
const MIN_SECRET_LENGTH = 6;

const secretsBySpec = new WeakMap<object, string[]>();

/** The values to hide: secret variables of `env` plus `extra` (e.g. the API key), longest first. */
export function secretValues(env: NodeJS.ProcessEnv, extra: (string | undefined)[] = []): string[] {
  const fromEnv = Object.entries(env)
    .filter(([name, value]) => value && value.length >= MIN_SECRET_LENGTH && isSecretVariable(name, value))
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
    strict: spec.strict,
    sessions: spec.sessions,
    sources: spec.sources,
    // Header values are credentials more often than not (Authorization: Bearer …): never shown.
    mcpServers: (spec.mcpServers ?? []).map((server) =>
      server.headers ? { ...server, headers: Object.fromEntries(Object.keys(server.headers).map((name) => [name, "***"])) } : server),
  };
  return redactDeep(view, secrets.sort((a, b) => b.length - a.length)) as object;
}
