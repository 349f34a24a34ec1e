/**
 * Shards (src/batch/shard.ts): for any id set and any N, the shards partition the ids exactly,
 * each id's shard does not depend on the other ids, `--shard I/N` is 1-based, and `--shard auto`
 * reads the 0-based scheduler index (Kubernetes Indexed Job, or YIEM_SHARD_INDEX) and says so.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseShard, shardOf } from "../../src/batch/shard.js";

describe("shardOf", () => {
  it("partitions any id set exactly: every id in exactly one shard 1..N, the same whatever the other ids", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 40, unit: "binary" }), { maxLength: 200 }), fc.integer({ min: 1, max: 64 }), (ids, count) => {
        const shards = Array.from({ length: count }, () => new Set<string>());
        for (const id of ids) {
          const shard = shardOf(id, count);
          if (!Number.isInteger(shard) || shard < 1 || shard > count) return false;
          shards[shard - 1].add(id);
        }
        // Exactly once across the shards, and the union is the whole set.
        if (shards.reduce((n, s) => n + s.size, 0) !== ids.length) return false;
        if (!ids.every((id) => shards.filter((s) => s.has(id)).length === 1)) return false;
        // Stable: the same id, alone or among other ids in another order, lands on the same shard.
        return [...ids].reverse().every((id) => shards[shardOf(id, count) - 1].has(id));
      }),
      { numRuns: 200 },
    );
  });

  it("spreads ids over the shards (no shard of 4 gets under 15% or over 35% of 4,000 ids)", () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 4000; i++) counts[shardOf(`issue-${i}`, 4) - 1]++;
    for (const count of counts) expect(count / 4000).toBeGreaterThan(0.15);
    for (const count of counts) expect(count / 4000).toBeLessThan(0.35);
  });

  it("is a fixed function of the id (sha256): known values stay the same across versions", () => {
    expect(shardOf("x", 1)).toBe(1);
    // sha256("a") starts ca978112 → 3398926610 % 4 = 2 → shard 3.
    expect(shardOf("a", 4)).toBe(3);
    expect(shardOf("item-1", 4)).toBe(2);
    expect(shardOf("item-2", 10)).toBe(10);
  });
});

describe("parseShard", () => {
  it("takes I/N 1-based and names what is wrong", () => {
    expect(parseShard("1/4", {})).toEqual({ index: 1, count: 4 });
    expect(parseShard("4/4", {})).toEqual({ index: 4, count: 4 });
    expect(() => parseShard("0/4", {})).toThrow("--shard 0/4: the index is 1-based, from 1 to 4 (a 0-based index from a scheduler: use --shard auto)");
    expect(() => parseShard("5/4", {})).toThrow("from 1 to 4");
    expect(() => parseShard("1/0", {})).toThrow("the count must be at least 1");
    expect(() => parseShard("two", {})).toThrow('--shard "two": use I/N (1-based, e.g. 1/4) or auto');
  });

  it("auto: JOB_COMPLETION_INDEX (Kubernetes, 0-based) first, then YIEM_SHARD_INDEX, each with YIEM_SHARD_COUNT, and says which it used", () => {
    expect(parseShard("auto", { JOB_COMPLETION_INDEX: "0", YIEM_SHARD_COUNT: "3" })).toEqual({ index: 1, count: 3, source: "JOB_COMPLETION_INDEX=0 (0-based), YIEM_SHARD_COUNT=3" });
    expect(parseShard("auto", { JOB_COMPLETION_INDEX: "2", YIEM_SHARD_INDEX: "0", YIEM_SHARD_COUNT: "3" }).index).toBe(3);
    expect(parseShard("auto", { YIEM_SHARD_INDEX: "1", YIEM_SHARD_COUNT: "2" })).toEqual({ index: 2, count: 2, source: "YIEM_SHARD_INDEX=1 (0-based), YIEM_SHARD_COUNT=2" });
    expect(() => parseShard("auto", {})).toThrow("--shard auto: no shard index in the environment");
    expect(() => parseShard("auto", { JOB_COMPLETION_INDEX: "1" })).toThrow("JOB_COMPLETION_INDEX is set (1) but YIEM_SHARD_COUNT is not");
    expect(() => parseShard("auto", { YIEM_SHARD_INDEX: "3", YIEM_SHARD_COUNT: "3" })).toThrow("YIEM_SHARD_INDEX=3 is 0-based and must be below YIEM_SHARD_COUNT=3");
    expect(() => parseShard("auto", { YIEM_SHARD_INDEX: "x", YIEM_SHARD_COUNT: "3" })).toThrow('YIEM_SHARD_INDEX="x" is not a whole number');
  });
});
