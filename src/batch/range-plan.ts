/**
 * How the check pass shares out a big input (docs/batch.md, "How the ids are read"): the part of
 * the input parsed whole, the parts its ids are staged in, and the byte ranges scanned beside the
 * main thread.
 *
 * Rules:
 * - One home for these numbers: the check pass (./check-pass.ts) and the scan started before the
 *   CLI loads (../cli/early-scan.ts) plan the same ranges of the same file, and the check takes a
 *   started scan only when its plan is the same.
 * - This module is part of the start bundle (scripts/bundle.mjs SHARED), loaded by every command:
 *   it imports nothing but `node:fs`.
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { MAX_LINE_BYTES } from "./line-limit.js";
import type { ByteRange } from "./lines.js";
import type { Shard } from "./shard.js";

/** The bytes at the start of an input whose lines the check pass parses whole (./check-pass.ts). */
export const FULL_CHECK_BYTES = 32 * 1024 * 1024;

/** The input past FULL_CHECK_BYTES is shared out between this thread and ID_RANGES worker threads when each share has at least this many bytes. */
export const ID_RANGE_BYTES = 64 * 1024 * 1024;
const ID_RANGES = 1;
/**
 * This thread's share of the bytes past FULL_CHECK_BYTES when split: less than an even share, as
 * it also loads the CLI and the spec, parses the first lines whole and sorts its ids after its
 * scan, while the worker starts before the CLI loads (../cli/early-scan.ts). Measured on 1 GB
 * of ~100 B lines (docs/performance.md): 0.4 was fastest while the batch command started the
 * worker; since it starts early, 0.25–0.3 on a slow host and 0.3–0.33 on a fast one.
 */
const OWN_SHARE = 0.3;

const MAX_PARTITION_BITS = 8;
/** The most parts of a StagedIds (./staged-ids.ts). */
export const MAX_PARTITIONS = 2 ** MAX_PARTITION_BITS;
/** Input bytes a part is for: few parts, so that staging writes go to few places (a write to one of ~1,000 parts missed the TLB about every time: staging 10 million ids took 2.0 s with 1,024 parts); sorting smaller parts is a little faster. */
const PART_BYTES = 64 * 1024 * 1024;

/** What to scan beside this thread (./id-scan.ts): the file, the range, the partitions of the whole input's StagedIds, this batch's shard. */
export interface IdScanRequest {
  file: string;
  range: ByteRange;
  partitions: number;
  shard?: Shard;
}

/** The bits that choose one of `partitions` parts (its log2); throws a RangeError unless it is a power of two up to MAX_PARTITIONS. */
export function partitionBits(partitions: number): number {
  const bits = Math.log2(partitions);
  if (!Number.isInteger(bits) || partitions > MAX_PARTITIONS) throw new RangeError(`partitions must be a power of two up to ${MAX_PARTITIONS}`);
  return bits;
}

/** How many parts suit an input of `bytes` bytes: about one per PART_BYTES, a power of two (at most MAX_PARTITIONS). */
export function partitionsFor(bytes: number): number {
  let bits = 0;
  while (bits < MAX_PARTITION_BITS && 2 ** bits * PART_BYTES < bytes) bits++;
  return 2 ** bits;
}

/**
 * The ranges scanned beside this thread: the input past `fullBytes` is shared out between this
 * thread (OWN_SHARE; it scans the start of the file too) and ID_RANGES others, evenly, each cut
 * right after a `\n` and at least `least` bytes long; none for a smaller input (or one without a
 * cut).
 */
export function idRanges(file: string, fullBytes: number, size: number, least: number): ByteRange[] {
  if (!Number.isFinite(fullBytes) || fullBytes >= size) return [];
  const count = Math.min(ID_RANGES, Math.floor((size - fullBytes) / least) - 1);
  const cuts: number[] = [];
  for (let k = 1; k <= count; k++) {
    const cut = cutAfterNewline(file, fullBytes + Math.floor((size - fullBytes) * (OWN_SHARE + ((1 - OWN_SHARE) * (k - 1)) / count)));
    if (cut !== undefined && cut < size && cut > (cuts[cuts.length - 1] ?? fullBytes)) cuts.push(cut);
  }
  return cuts.map((start, k) => ({ start, end: cuts[k + 1] ?? size }));
}

/** The scans of `file` beside this thread with the default FULL_CHECK_BYTES and without a ledger (see `idRanges`), for this batch's shard; none when the file cannot be read. */
export function rangeRequests(file: string, shard?: Shard): IdScanRequest[] {
  try {
    const size = statSync(file).size;
    const partitions = partitionsFor(size);
    return idRanges(file, FULL_CHECK_BYTES, size, ID_RANGE_BYTES).map((range) => scanRequest(file, range, partitions, shard));
  } catch {
    return [];
  }
}

/** The request to scan `range` of `file`, for a StagedIds of `partitions` parts and this batch's shard. */
export function scanRequest(file: string, range: ByteRange, partitions: number, shard?: Shard): IdScanRequest {
  return { file, range, partitions, ...(shard ? { shard } : {}) };
}

/** The offset right after the first `\n` at or after `at` in `file` (a cut between two lines), or undefined when there is none within MAX_LINE_BYTES. */
export function cutAfterNewline(file: string, at: number): number | undefined {
  const fd = openSync(file, "r");
  try {
    const chunk = Buffer.allocUnsafe(64 * 1024);
    for (let position = at; position - at <= MAX_LINE_BYTES;) {
      const bytesRead = readSync(fd, chunk, 0, chunk.length, position);
      if (bytesRead === 0) return undefined;
      const newline = chunk.indexOf(0x0a);
      if (newline >= 0 && newline < bytesRead) return position + newline + 1;
      position += bytesRead;
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}
