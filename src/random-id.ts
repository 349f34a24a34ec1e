/**
 * Random ids: run ids (UUID v4), temp-file suffixes, lock tokens, session-id suffixes.
 * Rules:
 * - The bytes come from the kernel's random source, `/dev/urandom` (cryptographically strong), read
 *   a block at a time and each byte handed out once. Loading node:crypto for them costs a run
 *   ~5 ms of start-up (docs/performance.md); only where `/dev/urandom` cannot be read (Windows, a
 *   chroot without it) does node:crypto supply them.
 * - Never `Math.random`: ids must not repeat across processes, and lock tokens and temp names must
 *   not be guessable.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { randomFillSync } from "node:crypto";

/** Bytes read from the kernel at a time. */
const BLOCK = 512;

let pool: Buffer = Buffer.alloc(0);
let used = 0;
/** False once `/dev/urandom` could not be read: node:crypto from then on. */
let kernelSource = true;

/** `n` fresh random bytes (see the module rules). */
export function randomBytesOf(n: number): Buffer {
  if (n > BLOCK) return fill(Buffer.alloc(n));
  if (used + n > pool.length) {
    pool = fill(Buffer.alloc(BLOCK));
    used = 0;
  }
  const bytes = Buffer.from(pool.subarray(used, used + n));
  pool.fill(0, used, used + n);
  used += n;
  return bytes;
}

/** `bytes` random bytes as lower-case hex (twice as many characters). */
export function randomHex(bytes: number): string {
  return randomBytesOf(bytes).toString("hex");
}

/** A random (version 4, RFC 9562) UUID, lower-case, as `crypto.randomUUID()` gives. */
export function randomUuid(): string {
  const b = randomBytesOf(16);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = b.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function fill(target: Buffer): Buffer {
  if (kernelSource) {
    try {
      readKernel(target);
      return target;
    } catch {
      kernelSource = false;
    }
  }
  return randomFillSync(target);
}

/** Fills `target` from `/dev/urandom`; throws when it cannot be opened, is not a device or ends early. */
function readKernel(target: Buffer): void {
  const fd = openSync("/dev/urandom", "r");
  try {
    if (!fstatSync(fd).isCharacterDevice()) throw new Error("/dev/urandom is not a device");
    let filled = 0;
    while (filled < target.length) {
      const n = readSync(fd, target, filled, target.length - filled, null);
      if (n <= 0) throw new Error("/dev/urandom ended");
      filled += n;
    }
  } finally {
    closeSync(fd);
  }
}
