/**
 * The ids of a whole batch input as the check pass keeps them (docs/batch.md, "Bad lines, and the
 * check pass"): 8 bytes an id, written in order and sorted at the end, instead of a hash table that a
 * big input misses in the cache and the TLB on every line (and whose fresh pages cost more to
 * fault in, on this machine, than the whole scan).
 *
 * Rules:
 * - An id is kept as its 64-bit hash (./id-index.ts hashId, hashIdBytes: the same for an id
 *   read from bytes or from a string) and its line: the first half's top bits choose one of
 *   `partitions` parts, the part keeps the other 32-bit half with the line, as one unsigned
 *   64-bit value (half << 32 | line) in a queue, and `marks[line]` keeps the first half's low 16
 *   bits. Two lines are read again only when all of these meet (~52 bits of the hash: with 32
 *   bits alone, 10 million ids gave ~700 pairs to read again).
 * - `stage` appends; every line is staged once (`appendPairs` and `setMarks` stage many at once,
 *   ./bulk-scan.ts), in about line order: `resolve` sorts each part (so equal halves sit
 *   together) and puts each run of lines of one half in line order before it decides: the first
 *   line of an id owns it, a later line with the same id is a repeat. Ids are compared exactly:
 *   lines whose kept hash meets are read again (`idAt`) and their ids compared, so two ids never
 *   count as one.
 * - A range of the input staged elsewhere (a worker thread, ./id-scan.ts) is handed over sorted
 *   (`exportSorted`) and kept as it is, its queues and its marks not copied (`absorb`, its lines
 *   offset by the lines before it; ranges come in line order, after the lines staged here, and
 *   a line of an absorbed range may still be staged, its mark then going to that range's marks):
 *   `resolve` merges each part's sorted queues by half, and a run of lines of one half is put in
 *   line order before it is decided, so a repeat across ranges is found like any other.
 * - After `resolve`, `owner` is the run pass's question: the line that owns an id, or -1 when the
 *   check never counted it.
 * - The queues are sized from the expected number of ids (`expect`) so they rarely grow: memory
 *   that is reserved but not written costs nothing.
 */
import { hashId, type IdHash, type IdOwners } from "./id-index.js";
import { sortPairsByHalf } from "./pair-sort.js";
import { forEachRun, type Segment } from "./sorted-runs.js";
import { partitionBits } from "./range-plan.js";

const FIRST_QUEUE = 64;

/** Parts of fewer pairs are sorted by the engine's sort; longer ones by `sortPairsByHalf` (~3 times faster for a million pairs). */
const RADIX_LEAST = 256;

/** One part's queue: pairs [line, half] (little-endian words of half << 32 | line). */
interface Part {
  words: Uint32Array;
  used: number;
  /** `used` when the queue was last sorted (staging more unsorts it). */
  sortedAt: number;
}

/** What `exportSorted` gives and `absorb` takes: each part's sorted pairs and the marks, of lines numbered from 1. */
export interface StagedRange {
  parts: Uint32Array[];
  marks: Uint16Array;
}

export class StagedIds implements IdOwners {
  private readonly parts: Part[];
  /** segments[i]: part i's pairs absorbed from other ranges, in line order. */
  private readonly segments: Segment[][];
  private readonly shift: number;
  private readonly hashed = new Int32Array(2);
  /** marks[line]: the low 16 bits of the first hash half of line `line`'s id (see module rules), for the lines up to `absorbedFrom`. */
  private marks = new Uint16Array(FIRST_QUEUE);
  /** The marks of the absorbed ranges, kept as they came (not copied), in line order: those of lines past `absorbedFrom`. */
  private readonly absorbedMarks: Array<{ offset: number; marks: Uint16Array }> = [];
  private absorbedFrom = Infinity;
  /** `owner`'s lines of the id's kept hash (reused). */
  private readonly candidates: number[] = [];
  private lastRead = 0;
  private lastId: string | undefined;

  /**
   * `idAt(line)`: the id of line `line`, read again (only when two kept hashes meet). `partitions`:
   * a power of two (./range-plan.ts partitionsFor). `hash` must be the one the staged hashes were made with.
   */
  constructor(private readonly idAt: (line: number) => string | undefined, partitions = 1, private readonly hash: IdHash = hashId) {
    this.shift = partitionBits(partitions);
    this.parts = Array.from({ length: partitions }, () => ({ words: new Uint32Array(FIRST_QUEUE * 2), used: 0, sortedAt: 0 }));
    this.segments = this.parts.map(() => []);
  }

  /** How many lines are staged. */
  get size(): number {
    let words = 0;
    for (const part of this.parts) words += part.used;
    for (const list of this.segments) for (const segment of list) words += segment.words.length;
    return words / 2;
  }

  /**
   * Sizes the queues for about `ids` ids in all, with room to spare so that an uneven part need
   * not grow: the queues are views of one buffer, whose pages are only faulted in where written.
   */
  expect(ids: number): void {
    const each = (Math.ceil((ids / this.parts.length) * 1.25) + FIRST_QUEUE) * 2;
    let shared: ArrayBuffer;
    try {
      if (this.marks.length < ids * 1.25) this.growMarks(Math.ceil(ids * 1.25) + FIRST_QUEUE);
      shared = new ArrayBuffer(each * this.parts.length * 4);
    } catch {
      return; // more than one buffer may hold (a huge input): the queues grow as ids come instead
    }
    this.parts.forEach((part, i) => {
      if (part.words.length >= each) return;
      const words = new Uint32Array(shared, i * each * 4, each);
      words.set(part.words.subarray(0, part.used));
      part.words = words;
    });
  }

  /** Queues line `line`'s id by its hash (a, b) (see module rules). */
  stage(a: number, b: number, line: number): void {
    const part = this.parts[this.partOf(a)]!;
    let at = part.used;
    if (at === part.words.length) this.growTo(part, part.words.length * 2);
    const words = part.words;
    words[at++] = line;
    words[at++] = b;
    part.used = at;
    if (line > this.absorbedFrom) {
      const range = this.absorbedRangeOf(line);
      range.marks[line - range.offset] = a;
    } else {
      if (line >= this.marks.length) this.growMarks(line * 2);
      this.marks[line] = a;
    }
  }

  /**
   * Whether `setMarks` may take the marks of lines from `firstLine` (lines not yet absorbed from
   * a range staged elsewhere) and `appendPairs` the pairs of `partitions` parts.
   */
  takesMarksFrom(firstLine: number, partitions: number): boolean {
    return partitions === this.parts.length && firstLine > 0 && this.absorbedFrom === Infinity;
  }

  /** The marks of lines `firstLine`, `firstLine` + 1, … at once (their pairs go to `appendPairs`); see `takesMarksFrom`. */
  setMarks(firstLine: number, marks: Uint16Array): void {
    const last = firstLine + marks.length - 1;
    if (last >= this.marks.length) this.growMarks(Math.max(last + 1, this.marks.length * 2));
    this.marks.set(marks, firstLine);
  }

  /** Appends pairs [line, half] to part `part`'s queue, as `stage` does one by one (their marks set by `setMarks`). */
  appendPairs(part: number, pairs: Uint32Array): void {
    const queue = this.parts[part]!;
    const used = queue.used + pairs.length;
    if (used > queue.words.length) this.growTo(queue, Math.max(used, queue.words.length * 2));
    queue.words.set(pairs, queue.used);
    queue.used = used;
  }

  /** The mark of line `line` (see module rules). */
  private markOf(line: number): number {
    if (line <= this.absorbedFrom) return this.marks[line]!;
    const range = this.absorbedRangeOf(line);
    return range.marks[line - range.offset]!;
  }

  /** The absorbed range holding line `line` (its marks are indexed by `line - offset`). */
  private absorbedRangeOf(line: number): { offset: number; marks: Uint16Array } {
    for (let k = this.absorbedMarks.length - 1; k >= 0; k--) {
      const range = this.absorbedMarks[k]!;
      if (line > range.offset) {
        if (line - range.offset < range.marks.length) return range;
        break;
      }
    }
    throw new RangeError(`line ${line} is in no absorbed range`);
  }

  /**
   * Sorts every part staged here that is not sorted yet (equal halves then sit together, the
   * lowest line first). Early, while a worker scans (./check-pass.ts), and again by `resolve` only for
   * a part staged to since.
   */
  sortParts(): void {
    let largest = 0;
    for (const part of this.parts) if (part.sortedAt !== part.used) largest = Math.max(largest, part.used);
    const scratch = largest >= RADIX_LEAST * 2 ? new Uint32Array(largest) : undefined;
    for (const part of this.parts) {
      if (part.sortedAt === part.used) continue;
      const words = part.words.subarray(0, part.used);
      if (scratch && words.length >= RADIX_LEAST * 2) sortPairsByHalf(words, scratch);
      else new BigUint64Array(words.buffer, words.byteOffset, words.length / 2).sort();
      part.sortedAt = part.used;
    }
  }

  /** The sorted pairs and the marks of the `lines` lines staged here, to be absorbed by the StagedIds of the whole input. */
  exportSorted(lines: number): StagedRange {
    this.sortParts();
    // Marks for every line, also the unstaged ones past the last staged (plain lines, which the caller may stage after `absorb`).
    if (this.marks.length < lines + 1) this.growMarks(lines + 1);
    return { parts: this.parts.map((part) => part.words.subarray(0, part.used)), marks: this.marks.subarray(0, lines + 1) };
  }

  /** Takes the pairs of a range whose line 1 is line `offset` + 1 here; ranges are absorbed in line order, after the lines staged here. */
  absorb(range: StagedRange, offset: number): void {
    if (range.parts.length !== this.parts.length) throw new RangeError("a staged range must have as many parts");
    range.parts.forEach((words, i) => void (words.length > 0 && this.segments[i]!.push({ words, offset })));
    const last = this.absorbedMarks[this.absorbedMarks.length - 1];
    if (offset < (last ? last.offset + last.marks.length - 1 : 0)) throw new RangeError("staged ranges must be absorbed in line order");
    this.absorbedFrom = Math.min(this.absorbedFrom, offset);
    this.absorbedMarks.push({ offset, marks: range.marks });
  }

  /** Sorts every part and finds the repeats: `repeated(line, id, owner)` for each line whose id an earlier line owns. */
  resolve(repeated: (line: number, id: string, owner: number) => void): void {
    this.sortParts();
    const onRun = (run: number[]) => this.resolveRun(run, repeated);
    for (let i = 0; i < this.parts.length; i++) forEachRun(this.sourcesOf(i), onRun);
  }

  /**
   * The line that owns `id`, or -1 (see module rules). `expected` is the caller's own line. The
   * lowest line with the id owns it, whichever queue holds it (lines of an absorbed range may be
   * staged in this thread's queue after it: a range's plain lines).
   */
  owner(id: string, expected: number): number {
    this.hash(id, this.hashed);
    const half = this.hashed[1]! >>> 0;
    const mark = this.hashed[0]! & 0xffff;
    const candidates = this.candidates;
    candidates.length = 0;
    for (const { words, offset } of this.sourcesOf(this.partOf(this.hashed[0]!))) {
      let low = 0;
      let high = words.length / 2;
      while (low < high) {
        const mid = (low + high) >>> 1;
        if (words[mid * 2 + 1]! < half) low = mid + 1;
        else high = mid;
      }
      for (let at = low * 2; at < words.length && words[at + 1] === half; at += 2) {
        const line = words[at]! + offset;
        if (this.markOf(line) === mark) candidates.push(line);
      }
    }
    candidates.sort((a, b) => a - b);
    for (const line of candidates) {
      if (line === expected) return expected;
      if (this.read(line) === id) return line;
    }
    return -1;
  }

  /** The part of an id whose first hash half is `a`: its top bits (see module rules). */
  private partOf(a: number): number {
    return this.shift === 0 ? 0 : a >>> (32 - this.shift);
  }

  /** Part `i`'s sorted queues: the one staged here, then those absorbed, in line order. */
  private sourcesOf(i: number): Segment[] {
    const part = this.parts[i]!;
    return [{ words: part.words.subarray(0, part.used), offset: 0 }, ...this.segments[i]!];
  }

  /**
   * The lines of `run` share the kept half: those whose marks meet too are compared by
   * their ids; each id's first line owns it, the others with that id are repeats.
   */
  private resolveRun(run: number[], repeated: (line: number, id: string, owner: number) => void): void {
    // Lines staged by number after a range was absorbed (./check-pass.ts) sit in this thread's queue: line order first.
    run.sort((a, b) => a - b);
    const groups = new Map<number, { first: number; owners?: Map<string, number> }>();
    for (const line of run) {
      const mark = this.markOf(line);
      const group = groups.get(mark);
      if (!group) {
        groups.set(mark, { first: line });
        continue;
      }
      if (!group.owners) {
        group.owners = new Map();
        const first = this.read(group.first);
        if (first !== undefined) group.owners.set(first, group.first);
      }
      const id = this.idAt(line);
      // A line that cannot be read again: the input changed under the check; the run pass refuses that line.
      if (id === undefined) continue;
      const owner = group.owners.get(id);
      if (owner === undefined) group.owners.set(id, line);
      else repeated(line, id, owner);
    }
  }

  /** `idAt`, remembering the last owner read (every repeat of one id reads the same owner). */
  private read(line: number): string | undefined {
    if (line !== this.lastRead) {
      this.lastRead = line;
      this.lastId = this.idAt(line);
    }
    return this.lastId;
  }

  private growMarks(lines: number): void {
    const bigger = new Uint16Array(lines);
    bigger.set(this.marks);
    this.marks = bigger;
  }

  private growTo(part: Part, words: number): void {
    const bigger = new Uint32Array(words);
    bigger.set(part.words.subarray(0, part.used));
    part.words = bigger;
  }
}
