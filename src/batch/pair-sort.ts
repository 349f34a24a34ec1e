/**
 * The sort of the check pass's staged ids (./staged-ids.ts): pairs [line, half] of 32-bit words,
 * as little-endian 64-bit values half << 32 | line.
 */

/**
 * Sorts the pairs [line, half] of `words` by half, keeping the order of pairs of one half (staged
 * in line order, so they stay so: the same order as sorting the 64-bit values): a radix sort, four
 * passes of 8 bits through `scratch` (at least as long as `words`), ending in `words`.
 */
export function sortPairsByHalf(words: Uint32Array, scratch: Uint32Array): void {
  const counts = new Uint32Array(4 * 256);
  const length = words.length;
  for (let i = 1; i < length; i += 2) {
    const half = words[i]!;
    counts[half & 0xff]!++;
    counts[256 + ((half >>> 8) & 0xff)]!++;
    counts[512 + ((half >>> 16) & 0xff)]!++;
    counts[768 + (half >>> 24)]!++;
  }
  let from = words;
  let to = scratch;
  for (let pass = 0; pass < 4; pass++) {
    const base = pass * 256;
    let sum = 0;
    for (let digit = 0; digit < 256; digit++) {
      const count = counts[base + digit]!;
      counts[base + digit] = sum;
      sum += count;
    }
    const shift = pass * 8;
    for (let i = 0; i < length; i += 2) {
      const half = from[i + 1]!;
      const at = counts[base + ((half >>> shift) & 0xff)]!++ * 2;
      to[at] = from[i]!;
      to[at + 1] = half;
    }
    const swap = from;
    from = to;
    to = swap;
  }
}
