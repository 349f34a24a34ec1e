/**
 * Whether a value survives JSON unchanged, the rule for anything a cache keeps as JSON (the parse
 * cache of the command line, ./cli/parse-cache.ts; the spec cache, ./config/spec-cache.ts): a
 * value that does not (a YAML `!!timestamp` as a Date, `.inf`, a Map) would come back from the
 * cache as another value, so it is never cached.
 */

/** Strings, finite numbers, booleans, null, and arrays and plain objects of them (an undefined property is dropped by JSON, as it is absent). */
export function survivesJson(value: unknown): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(survivesJson);
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.values(value as Record<string, unknown>).every((item) => item === undefined || survivesJson(item));
  }
  return false;
}
