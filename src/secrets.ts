/**
 * Which environment variables are secrets: their values are hidden in output (events, results,
 * `yiem config`, replay files) and withheld from child processes (command tools and hooks).
 * Rules: a secret variable has a secret-looking name, a credential-carrier name, or a value that
 * is a URL with a password (`isSecretVariable`); names added with `addSecretEnvNames` (the spec's
 * `model.apiKeyEnv`, and `OPENAI_API_KEY` always) count too; values shorter than 6 characters are
 * withheld but not searched for in text (they would match ordinary words).
 */

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

/** The values to hide: secret variables of `env` plus `extra` (e.g. the API key), longest first. */
export function secretValues(env: NodeJS.ProcessEnv, extra: (string | undefined)[] = []): string[] {
  const fromEnv = Object.entries(env)
    .filter(([name, value]) => value && value.length >= MIN_SECRET_LENGTH && isSecretEnvVar(name, value))
    .map(([, value]) => value as string);
  const all = [...fromEnv, ...extra.filter((value): value is string => !!value && value.length >= MIN_SECRET_LENGTH)];
  return [...new Set(all)].sort((a, b) => b.length - a.length);
}

const extraSecretNames = new Set<string>(["OPENAI_API_KEY"]);

/** Also treat these exact names as secrets (e.g. the spec's `model.apiKeyEnv`). */
export function addSecretEnvNames(...names: string[]): void {
  for (const name of names) if (name) extraSecretNames.add(name);
}

/** A secret variable by the rules above, or a name added with `addSecretEnvNames`. */
export function isSecretEnvVar(name: string, value?: string): boolean {
  return isSecretVariable(name, value) || extraSecretNames.has(name);
}
