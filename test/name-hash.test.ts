/** Cache entry names: 64-bit FNV-1a in 32-bit halves, checked against a BigInt reference. */
import { describe, expect, it } from "vitest";
import { nameHash } from "../src/name-hash.js";

/** FNV-1a 64 over UTF-16 code units, a NUL after each part, with BigInt arithmetic. */
function reference(...parts: string[]): string {
  let h = 0xcbf29ce484222325n;
  for (const part of parts) {
    for (const unit of [...Array.from({ length: part.length }, (_, i) => part.charCodeAt(i)), 0]) {
      h ^= BigInt(unit);
      h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
    }
  }
  return h.toString(16).padStart(16, "0");
}

describe("nameHash", () => {
  it("equals 64-bit FNV-1a for empty, ASCII, long and non-ASCII parts", () => {
    const samples: string[][] = [[], [""], ["a"], ["yiem-code-cache-2", "0123abcd", "v20.20.2", "x64", ""], ["x".repeat(5000)], ["é€😀\u0000\uffff"], ["a", "b"], ["ab"]];
    for (let i = 0; i < 200; i++) samples.push([Array.from({ length: i % 37 }, (_, j) => String.fromCharCode((i * 7919 + j * 104729) % 65536)).join("")]);
    for (const parts of samples) expect(nameHash(...parts)).toBe(reference(...parts));
  });

  it("is 16 hex digits and tells the parts apart from their concatenation", () => {
    expect(nameHash("spec", "a")).toMatch(/^[0-9a-f]{16}$/);
    expect(nameHash("a", "b")).not.toBe(nameHash("ab"));
    expect(nameHash("ab", "")).not.toBe(nameHash("a", "b"));
  });
});
