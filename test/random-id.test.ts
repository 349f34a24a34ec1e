/** Random ids from the kernel's source (src/random-id.ts): shape, version bits, no repeats. */
import { describe, expect, it } from "vitest";
import { randomBytesOf, randomHex, randomUuid } from "../src/random-id.js";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("random ids", () => {
  it("gives version-4 UUIDs, lower-case, never the same twice in 20,000", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const id = randomUuid();
      expect(id).toMatch(UUID_V4);
      seen.add(id);
    }
    expect(seen.size).toBe(20_000);
  });

  it("gives hex of twice the byte count, and byte blocks larger than its pool", () => {
    expect(randomHex(6)).toMatch(/^[0-9a-f]{12}$/);
    expect(randomHex(0)).toBe("");
    const big = randomBytesOf(4096);
    expect(big.length).toBe(4096);
    expect(new Set(big).size).toBeGreaterThan(200); // uniform bytes: nearly all 256 values appear
  });

  it("hands each byte out once: consecutive draws share no 16-byte window", () => {
    const a = randomBytesOf(300);
    const b = randomBytesOf(300);
    expect(a.equals(b)).toBe(false);
    expect(b.includes(a.subarray(0, 16))).toBe(false);
  });

  it("spreads bits evenly (each of the 128 bit positions of 4,000 draws set 40–60% of the time)", () => {
    const counts = new Array(128).fill(0);
    for (let i = 0; i < 4000; i++) {
      const bytes = randomBytesOf(16);
      for (let bit = 0; bit < 128; bit++) if (bytes[bit >> 3] & (1 << (bit & 7))) counts[bit]++;
    }
    for (const count of counts) {
      expect(count / 4000).toBeGreaterThan(0.4);
      expect(count / 4000).toBeLessThan(0.6);
    }
  });
});
