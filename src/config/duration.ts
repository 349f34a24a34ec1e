/** Durations: milliseconds as a number or digits, or a number with a unit (ms, s, m, h). */
import { ConfigError } from "./errors.js";

const DURATION = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/**
 * `1500`, `"1500"`, `"500ms"`, `"30s"`, `"1.5s"`, `"2m"`, `"1h"` → milliseconds (rounded).
 * Throws ConfigError on anything else (negative, NaN, unknown unit, empty).
 */
export function parseDuration(input: number | string): number {
  if (typeof input === "number") {
    if (Number.isFinite(input) && input >= 0) return Math.round(input);
    throw new ConfigError(`invalid duration ${input} (use milliseconds like 1500 or a unit: 500ms, 30s, 2m, 1h)`);
  }
  const match = typeof input === "string" ? DURATION.exec(input) : null;
  if (!match) {
    throw new ConfigError(
      `invalid duration ${JSON.stringify(input)} (use milliseconds like 1500 or a unit: 500ms, 30s, 2m, 1h)`,
    );
  }
  return Math.round(Number(match[1]) * UNIT_MS[match[2] ?? "ms"]);
}
