/**
 * `${VAR}` and `${VAR:-default}` in every string value of a spec (keys are left alone).
 * Rules: `${VAR}` needs VAR set (an empty value counts as set); `${VAR:-default}` uses the
 * default when VAR is unset or empty; `$${` is a literal `${`; any other `${…}` is an error.
 */
import type { SpecPath } from "./parse.js";

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
