import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/errors.js";
import { parseDuration } from "../../src/config/duration.js";

describe("parseDuration", () => {
  it.each([
    [1500, 1500],
    ["1500", 1500],
    ["500ms", 500],
    ["30s", 30000],
    ["1.5s", 1500],
    ["2m", 120000],
    ["1h", 3600000],
    [" 45 s ", 45000],
    [0, 0],
  ])("%j → %i ms", (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each(["", "abc", "-5", "5d", "1m30s", "s", "1e3"])("rejects %j", (input) => {
    expect(() => parseDuration(input)).toThrow(ConfigError);
    expect(() => parseDuration(input)).toThrow(/invalid duration/);
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])("rejects the number %d", (input) => {
    expect(() => parseDuration(input)).toThrow(/invalid duration/);
  });

  it("units scale linearly", () => {
    fc.assert(
      fc.property(fc.nat(100_000), (n) => {
        expect(parseDuration(`${n}s`)).toBe(n * 1000);
        expect(parseDuration(`${n}m`)).toBe(n * 60_000);
        expect(parseDuration(`${n}ms`)).toBe(n);
        expect(parseDuration(String(n))).toBe(n);
      }),
    );
  });
});
