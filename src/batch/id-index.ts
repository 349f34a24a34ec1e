/**
 * The ids of a batch input, kept compact (docs/batch.md, "Bad lines, and the check pass"): a hash
 * table of 64-bit id hashes, each with the number of the line that first used the id, in one
 * Int32Array (12 bytes a slot, at most 70% full; one memory access a probe) instead of a Set of
 * strings.
 *
 * Rules:
 * - Ids are compared exactly: when a new id's hash is already taken, the earlier line is read
 *   again (`idAt`) and its id compared; a different id with the same hash goes to a small Map
 *   of its own, so two ids never count as one.
 * - `add` is the lines a check parses whole, and the run pass without a check: the first line
 *   of an id owns it. `owner` is the line that owns an id, or -1 when it was never added. The
 *   lines read for ids only go to ./staged-ids.ts instead (no string per line, no random access
 *   per line).
 */

const SLOT = 3;
const FIRST_CAPACITY = 1 << 12;
const MAX_LOAD = 0.7;

/** Two 32-bit hashes of a string (its UTF-16 code units), each finished with a full avalanche, written to out[0] and out[1]. */
export type IdHash = (id: string, out: Int32Array) => void;

export const hashId: IdHash = (id, out) => {
  let a = 0x811c9dc5 | 0;
  let b = 0x9747b28c | 0;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 13;
  }
  out[0] = mix(a ^ id.length);
  out[1] = mix(b);
};

/** `hashId` of the string whose code units are the bytes `start`..`end` of `bytes` (an ASCII or latin1 id read from the input's bytes). */
export function hashIdBytes(bytes: Uint8Array, start: number, end: number, out: Int32Array): void {
  let a = 0x811c9dc5 | 0;
  let b = 0x9747b28c | 0;
  for (let i = start; i < end; i++) {
    const c = bytes[i]!;
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 13;
  }
  out[0] = mix(a ^ (end - start));
  out[1] = mix(b);
}

const digits = new Uint8Array(16);
/** `hashId` of `String(n)` for a positive integer `n` (the id of a plain or JSON-string line). */
export function hashLineNumber(n: number, out: Int32Array): void {
  let at = digits.length;
  do {
    digits[--at] = 0x30 + (n % 10);
    n = Math.floor(n / 10);
  } while (n > 0);
  hashIdBytes(digits, at, digits.length, out);
}

function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

/** Who owns an id (see module rules): what the run pass holds every line to after a check. */
export interface IdOwners {
  /** The line that owns `id`, or -1. `expected` is the caller's own line. */
  owner(id: string, expected: number): number;
}

export class IdIndex implements IdOwners {
  private capacity = FIRST_CAPACITY;
  /** Slot i: [hash a, hash b, line] at 3i; line 0 is an empty slot (lines are 1-based). */
  private slots = new Int32Array(FIRST_CAPACITY * SLOT);
  private count = 0;
  /** Ids whose hash another id took first, and their line. */
  private readonly collided = new Map<string, number>();
  private readonly hashed = new Int32Array(2);

  /** `idAt(line)`: the id of line `line`, read again (only when two hashes meet). */
  constructor(private readonly idAt: (line: number) => string | undefined, private readonly hash: IdHash = hashId) {}

  /** How many distinct ids. */
  get size(): number {
    return this.count + this.collided.size;
  }

  /** Records that line `line` uses `id`; false when an earlier line uses it already. */
  add(id: string, line: number): boolean {
    if (this.collided.size > 0 && this.collided.has(id)) return false;
    this.hash(id, this.hashed);
    const a = this.hashed[0]!;
    const b = this.hashed[1]!;
    const at = this.find(a, b);
    const owner = this.slots[at + 2]! >>> 0;
    if (owner === 0) {
      this.slots[at] = a;
      this.slots[at + 1] = b;
      this.slots[at + 2] = line;
      if (++this.count > this.capacity * MAX_LOAD) this.grow();
      return true;
    }
    if (owner === line) return true;
    if (this.idAt(owner) === id) return false;
    this.collided.set(id, line);
    return true;
  }

  /** The line that owns `id` (see module rules), or -1. `expected` is the caller's own line. */
  owner(id: string, expected: number): number {
    const other = this.collided.size > 0 ? this.collided.get(id) : undefined;
    if (other !== undefined) return other;
    this.hash(id, this.hashed);
    const a = this.hashed[0]!;
    const b = this.hashed[1]!;
    const owner = this.slots[this.find(a, b) + 2]! >>> 0;
    if (owner === 0) return -1;
    if (owner === expected) return expected;
    return this.idAt(owner) === id ? owner : -1;
  }

  /** The index in `slots` of the slot holding hash (a, b), or of the empty slot where it would go. */
  private find(a: number, b: number): number {
    const slots = this.slots;
    const mask = this.capacity - 1;
    for (let slot = b & mask; ; slot = (slot + 1) & mask) {
      const at = slot * SLOT;
      if (slots[at + 2] === 0 || (slots[at + 1] === b && slots[at] === a)) return at;
    }
  }

  /** Makes room for about `ids` ids in all at once, instead of doubling as they come. */
  expect(ids: number): void {
    let capacity = this.capacity;
    while (capacity * MAX_LOAD < ids) capacity *= 2;
    try {
      if (capacity > this.capacity) this.resize(capacity);
    } catch {
      // more than one buffer may hold (a huge estimate): the table grows as ids come instead
    }
  }

  private grow(): void {
    this.resize(this.capacity * 2);
  }

  /** Moves every slot to a table of `capacity` slots; the table is allocated first, so a failed allocation leaves this one as it was. */
  private resize(capacity: number): void {
    const old = this.slots;
    const slots = new Int32Array(capacity * SLOT);
    this.capacity = capacity;
    this.slots = slots;
    for (let at = 0; at < old.length; at += SLOT) {
      if (old[at + 2] === 0) continue;
      const to = this.find(old[at]!, old[at + 1]!);
      this.slots[to] = old[at]!;
      this.slots[to + 1] = old[at + 1]!;
      this.slots[to + 2] = old[at + 2]!;
    }
  }
}
