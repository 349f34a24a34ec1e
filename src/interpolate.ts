/**
 * `${VAR}` and `${VAR:-default}`: the one interpolation rule, for every string value of a spec
 * (keys are left alone) and the `env` of a command tool's manifest.
 * Rules: `${VAR}` needs VAR set (an empty value counts as set), else it is an error naming VAR;
 * `${VAR:-default}` uses the default when VAR is unset or empty; `$${` is a literal `${`; any
 * other `${…}` is an error. One reading on top, for a child's `env` only (`interpolateEnvMap`):
 * an entry that is a lone `${VAR}` means "pass VAR on", so with VAR unset the entry is left out.
 */

/** A key path in the spec: `["limits", "maxTurns"]`, `["toolDirs", 1]`. */
export type SpecPath = (string | number)[];

const PLACEHOLDER = /\$\$\{|\$\{([^}]*)\}?/g;
const REFERENCE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

/** Why a string could not be interpolated; the caller adds file, line and key. */
export class InterpolationError extends Error {
  constructor(
    message: string,
    readonly specPath: SpecPath,
    readonly variable?: string,
  ) {
    super(message);
    this.name = "InterpolationError";
  }
}

/** Interpolate one string; `specPath` only labels errors. */
export function interpolateString(text: string, env: NodeJS.ProcessEnv, specPath: SpecPath = []): string {
  if (!text.includes("${")) return text;
  return text.replace(PLACEHOLDER, (whole, inner: string | undefined) => {
    if (whole === "$${") return "${";
    const match = whole.endsWith("}") && inner !== undefined ? REFERENCE.exec(inner) : null;
    if (!match) {
      throw new InterpolationError(
        `bad placeholder ${JSON.stringify(whole)} (use \${VAR} or \${VAR:-default}; $\${ for a literal \${)`,
        specPath,
      );
    }
    const [, name, fallback] = match;
    const value = env[name];
    if (fallback !== undefined) return value ? value : fallback;
    if (value === undefined) {
      throw new InterpolationError(
        `environment variable ${name} is not set (use \${${name}:-default} for a default)`,
        specPath,
        name,
      );
    }
    return value;
  });
}

/**
 * A deep copy of `value` with every string interpolated. The first failure is thrown, unless
 * `onError` is given: then every failure goes to it and the failing string is kept as written.
 */
export function interpolateValue(
  value: unknown,
  env: NodeJS.ProcessEnv,
  specPath: SpecPath = [],
  onError?: (error: InterpolationError) => void,
): unknown {
  if (typeof value === "string") {
    if (!onError) return interpolateString(value, env, specPath);
    try {
      return interpolateString(value, env, specPath);
    } catch (error) {
      if (!(error instanceof InterpolationError)) throw error;
      onError(error);
      return value;
    }
  }
  if (Array.isArray(value)) return value.map((item, index) => interpolateValue(item, env, [...specPath, index], onError));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolateValue(item, env, [...specPath, key], onError)]),
    );
  }
  return value;
}

/**
 * A child's `env` map (a command tool's manifest) interpolated by the module rules: an entry that
 * is a lone `${VAR}` with VAR unset is left out; anything else that fails throws
 * InterpolationError with the path `env.NAME`.
 */
export function interpolateEnvMap(env: Record<string, string>, source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    const lone = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(value);
    if (lone && source[lone[1]] === undefined) continue;
    out[name] = interpolateString(value, source, ["env", name]);
  }
  return out;
}
