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

/** A deep copy of `value` with every string interpolated. */
export function interpolateValue(value: unknown, env: NodeJS.ProcessEnv, specPath: SpecPath = []): unknown {
  if (typeof value === "string") return interpolateString(value, env, specPath);
  if (Array.isArray(value)) return value.map((item, index) => interpolateValue(item, env, [...specPath, index]));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolateValue(item, env, [...specPath, key])]),
    );
  }
  return value;
}
