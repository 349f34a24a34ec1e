/** The cache entries' checksum: the WebAssembly function and its JavaScript twin agree, and corruption changes it. */
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { checksum, checksumBuffer, checksumInJs } from "../src/checksum.js";
import { repoRoot } from "./support/cli.js";

/** Pseudo-random bytes (deterministic). */
function bytes(length: number, seed = 1): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

describe("checksum", () => {
  it("the WebAssembly function and the JavaScript one agree for every length mod 4, any offset, and 1 MB", () => {
    const data = bytes(1 << 20);
    for (const [start, length] of [[0, 0], [0, 1], [1, 2], [2, 3], [3, 4], [0, 5], [5, 1027], [7, 65537], [0, data.length]]) {
      const part = data.subarray(start, start + length);
      expect(checksum(part)).toBe(checksumInJs(part));
      expect(checksum(part)).toMatch(/^[0-9a-f]{16}$/);
    }
  });

  it("reads bytes inside a checksumBuffer where they lie, at any offset, with the same result; a larger one grows the memory", () => {
    const data = bytes(300_000, 3);
    const buffer = checksumBuffer(data.length + 16);
    buffer.set(data, 5);
    for (const [start, length] of [[5, data.length], [6, 1027], [8, 4], [9, 0]]) {
      const inside = buffer.subarray(start, start + length);
      expect(checksum(inside)).toBe(checksumInJs(data.subarray(start - 5, start - 5 + length)));
    }
    // Growing detaches the old views; a new buffer is as good.
    const larger = checksumBuffer(3 << 20);
    expect(larger.length).toBe(3 << 20);
    larger.set(data, 1);
    expect(checksum(larger.subarray(1, 1 + data.length))).toBe(checksumInJs(data));
    // Bytes outside it are copied in, as before.
    expect(checksum(data)).toBe(checksumInJs(data));
  });

  it("changes with a flipped bit anywhere, a zero-filled tail, a cut, or swapped words", () => {
    const data = bytes(4099, 7);
    const sum = checksum(data);
    for (const at of [0, 1, 2, 3, 1000, 4095, 4096, 4098]) {
      const flipped = data.slice();
      flipped[at] ^= 1 << (at % 8);
      expect(checksum(flipped)).not.toBe(sum);
    }
    const zeroed = data.slice();
    zeroed.fill(0, 2048);
    expect(checksum(zeroed)).not.toBe(sum);
    expect(checksum(data.subarray(0, 4098))).not.toBe(sum);
    const swapped = data.slice();
    swapped.set(data.subarray(0, 4), 4);
    swapped.set(data.subarray(4, 8), 0);
    expect(checksum(swapped)).not.toBe(sum);
  });

  it("falls back to JavaScript where WebAssembly cannot run (node --jitless), with the same result", () => {
    const script = `const { checksum } = require(${JSON.stringify(join(repoRoot, "dist", "bundle", "start.cjs"))}); process.stdout.write(String(typeof WebAssembly) + " " + checksum(Buffer.from("hello, cache")));`;
    const run = spawnSync(process.execPath, ["--jitless", "-e", script], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe(`undefined ${checksumInJs(new TextEncoder().encode("hello, cache"))}`);
  });
});
