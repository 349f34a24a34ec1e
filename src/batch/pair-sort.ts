/**
 * The sort of the check pass's staged ids (./staged-ids.ts): pairs [line, half] of 32-bit words,
 * as little-endian 64-bit values half << 32 | line.
 */

/** The digits of the radix sort: 11, 11 and 10 bits of the half (three passes instead of four of 8 bits; 2,048 counters a pass still sit in the cache). */
const DIGITS = [
  { shift: 0, mask: 0x7ff },
  { shift: 11, mask: 0x7ff },
  { shift: 22, mask: 0x3ff },
] as const;
const RADIX = 2048;

/**
 * Sorts the pairs [line, half] of `words` by half, keeping the order of pairs of one half (a
 * stable sort: for pairs staged in line order, the order of their 64-bit values): a radix sort, three
 * passes through `scratch` (at least as long as `words`), ending in `words`.
 */
export function sortPairsByHalf(words: Uint32Array, scratch: Uint32Array): void {
  const counts = new Uint32Array(DIGITS.length * RADIX);
  const length = words.length;
  for (let i = 1; i < length; i += 2) {
    const half = words[i]!;
    counts[half & 0x7ff]!++;
    counts[RADIX + ((half >>> 11) & 0x7ff)]!++;
    counts[2 * RADIX + (half >>> 22)]!++;
  }
  let from = words;
  let to = scratch;
  for (let pass = 0; pass < DIGITS.length; pass++) {
    const base = pass * RADIX;
    let sum = 0;
    for (let digit = 0; digit < RADIX; digit++) {
      const count = counts[base + digit]!;
      counts[base + digit] = sum;
      sum += count;
    }
    const { shift, mask } = DIGITS[pass]!;
    for (let i = 0; i < length; i += 2) {
      const half = from[i + 1]!;
      const at = counts[base + ((half >>> shift) & mask)]!++ * 2;
      to[at] = from[i]!;
      to[at + 1] = half;
    }
    const swap = from;
    from = to;
    to = swap;
  }
  // An odd number of passes ends in `scratch`.
  if (from !== words) words.set(from.subarray(0, length));
}
