/**
 * Short file names for cache entries, from the strings an entry stands for. Rules:
 * - 64-bit FNV-1a over the UTF-16 code units of each part, a NUL after each, as 16 hex digits;
 * - a name only places an entry: it proves nothing (FNV collides easily by design), so every
 *   entry also holds what it stands for, compared exactly when read (src/cache-dir.ts);
 * - plain JavaScript, so naming an entry loads no module (node:crypto costs a start ~3 ms).
 */

/** FNV-1a's 64-bit offset basis and prime (2^40 + 0x1b3), in 32-bit halves. */
const OFFSET_HIGH = 0xcbf29ce4;
const OFFSET_LOW = 0x84222325;
const PRIME_LOW = 0x1b3;
const TWO_32 = 0x1_0000_0000;

/** The 16-hex-digit name of `parts` (module rules). */
export function nameHash(...parts: string[]): string {
  let high = OFFSET_HIGH;
  let low = OFFSET_LOW;
  for (const part of parts) {
    for (let i = 0; i <= part.length; i++) {
      low ^= i < part.length ? part.charCodeAt(i) : 0;
      // (high·2^32 + low) · (2^40 + 0x1b3) mod 2^64, in halves: low·0x1b3 < 2^41 is exact in a double.
      const lowProduct = (low >>> 0) * PRIME_LOW;
      high = (Math.imul(high, PRIME_LOW) + Math.floor(lowProduct / TWO_32) + (low << 8)) >>> 0;
      low = lowProduct >>> 0;
    }
  }
  return high.toString(16).padStart(8, "0") + low.toString(16).padStart(8, "0");
}
