/**
 * The batch input's lines as byte spans (docs/batch.md, "Bad lines, and the check pass"): the
 * file is read in big chunks into one reused Buffer and split at `\n` with Buffer.indexOf, so the
 * check pass can look at a line's bytes without decoding it, and both passes see the same lines.
 *
 * Rules:
 * - A line is the bytes before a `\n` (a `\r` before it is dropped); the last line needs no `\n`.
 *   A UTF-8 byte order mark at the start of the file is not part of line 1.
 * - `offset` is the byte offset of the line's first byte in the file. The reader keeps the offset
 *   of every CHECKPOINT_LINES-th line (`checkpoints`), so that `lineAt` can read any line again
 *   (the id index, ./id-index.ts, confirming that two ids of one hash are the same) by scanning
 *   at most CHECKPOINT_LINES lines.
 * - A line longer than MAX_LINE_BYTES is reported by its length (`tooLong`) and skipped without
 *   being held: the buffer never grows past MAX_LINE_BYTES + one chunk.
 * - `textLines` / `readTextLines` give the lines as text (UTF-8, each line decoded on its own):
 *   the one way batch code reads a JSONL file line by line (the input's run pass, the results
 *   file as ledger, `batch merge`), streamed, so a file of any size is never held whole.
 * - The next chunk is read (by libuv's thread pool) while this one is scanned, into the other of
 *   two buffers: on two cores the copy out of the page cache and the scan run side by side
 *   (measured: 1 GB of 100-byte lines split in 1.2 s with synchronous reads, 0.5 s this way, at
 *   load 6). Each buffer keeps HEAD_BYTES of room before its data, where the unfinished line of
 *   the chunk before is copied, so a line is always contiguous; a longer unfinished line is
 *   joined with the next chunk in a buffer of its own. Awaiting each read lets signals and
 *   timers run between chunks.
 * - A visitor with `lines` is given each chunk's complete lines at once (the check pass's id-only
 *   lines, ./bulk-scan.ts) and reads them in line order as `line` would, or gives undefined and
 *   gets them one by one. It records the checkpoints of the lines it reads (`isCheckpointLine`).
 *   The read buffers can be given (`buffers`, READ_BUFFER_BYTES each), so that they lie in memory
 *   such a visitor reads (a WebAssembly memory).
 */
import { openSync, readSync, closeSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { MAX_LINE_BYTES } from "./line-limit.js";

export { MAX_LINE_BYTES };
const CHUNK_BYTES = 4 * 1024 * 1024;
/** The first read of a reader opened `soon` (the run pass): its first lines are ready after a small read, not after decoding a whole chunk. */
const SOON_BYTES = 64 * 1024;
/** Room before a chunk's data for the unfinished line of the chunk before (a longer one is joined in a buffer of its own). */
const HEAD_BYTES = 64 * 1024;
export const CHECKPOINT_LINES = 1024;
/** The size of each of a reader's two read buffers. */
export const READ_BUFFER_BYTES = HEAD_BYTES + CHUNK_BYTES;
const NEWLINE = 0x0a;
const CR = 0x0d;

/** Bytes `start`..`end` of a file. */
export interface ByteRange {
  start: number;
  end: number;
}

/** One line as text, by its 1-based number: its text, or (past MAX_LINE_BYTES) its length. */
export type InputLine = { line: number; text: string } | { line: number; tooLong: number };

/** Receives every line of one chunk; `start`..`end` are the line's bytes in `buffer` (no `\r\n`). */
export interface LineVisitor {
  line(buffer: Buffer, start: number, end: number, line: number, offset: number): void;
  tooLong(line: number, bytes: number, offset: number): void;
  /**
   * The complete lines `buffer[start..stop)` (`stop` right after a `\n`), the first numbered
   * `firstLine`, `base` the file offset of buffer[0]: reads them all and pushes to `checkpoints`
   * the offset of each checkpoint line, returning how many lines it read; or undefined, and
   * `line` gets them one by one (see module rules).
   */
  lines?(buffer: Buffer, start: number, stop: number, firstLine: number, base: number, checkpoints: number[]): number | undefined;
}

/** Whether line `line`'s offset is one of a reader's `checkpoints`. */
export function isCheckpointLine(line: number): boolean {
  return (line - 1) % CHECKPOINT_LINES === 0;
}

/** Reads a file's lines chunk by chunk (see module rules). */
export class LineReader {
  /** The two read buffers, each with room before its data for the unfinished line of the chunk before. */
  private readonly first: Buffer;
  private readonly second: Buffer;
  /** The buffer being scanned: a read buffer, or `wide`. */
  private buffer: Buffer;
  /** The read buffer the next chunk is read into while `buffer` is scanned. */
  private spare: Buffer;
  /** For an unfinished line longer than HEAD_BYTES: a buffer it and the next chunk are joined in (grown as needed). */
  private wide: Buffer | undefined;
  /** The read into `spare` under way: its byte count. */
  private pending: Promise<number> | undefined;
  /** The unfinished line: `carry` bytes at `carryAt` in `buffer`. */
  private carryAt = 0;
  private carry = 0;
  /** The file offset of buffer[0]. */
  private base = 0;
  /** The file offset up to which chunks were taken (the next read's position once `pending` is done). */
  private taken = 0;
  private lineNumber = 0;
  /** While skipping a line that is too long: its bytes so far (0: not skipping). */
  private skipping = 0;
  private skipOffset = 0;
  private ended = false;
  /** checkpoints[k]: the offset of line k × CHECKPOINT_LINES + 1. */
  readonly checkpoints: number[] = [];

  /** The file offset where reading stops (the end of the byte range read). */
  private readonly stop: number;

  /** The size of the next read (see SOON_BYTES). */
  private chunkBytes: number;

  private constructor(private readonly handle: FileHandle, range?: ByteRange, soon = false, buffers?: readonly [Buffer, Buffer]) {
    if (buffers && buffers.some((buffer) => buffer.length < READ_BUFFER_BYTES)) throw new RangeError(`a LineReader's read buffers must have ${READ_BUFFER_BYTES} bytes`);
    this.first = buffers?.[0] ?? Buffer.allocUnsafe(READ_BUFFER_BYTES);
    this.second = buffers?.[1] ?? Buffer.allocUnsafe(READ_BUFFER_BYTES);
    this.buffer = this.second;
    this.spare = this.first;
    this.taken = range?.start ?? 0;
    this.stop = range?.end ?? Infinity;
    this.chunkBytes = soon ? SOON_BYTES : CHUNK_BYTES;
  }

  /**
   * A reader of `file`, or of its bytes `range.start`..`range.end` (cut right after a `\n`; line
   * numbers then count from the range's start). `soon`: the first read is SOON_BYTES, for a reader
   * whose first lines are wanted at once. `buffers`: the two read buffers (see module rules).
   */
  static async open(file: string, range?: ByteRange, options: { soon?: boolean; buffers?: readonly [Buffer, Buffer] } = {}): Promise<LineReader> {
    return new LineReader(await open(file, "r"), range, options.soon, options.buffers);
  }

  /** The file's size when opened, in bytes. */
  async size(): Promise<number> {
    return (await this.handle.stat()).size;
  }

  /** Bytes taken so far, as lines or the unfinished line kept. */
  get bytesRead(): number {
    return this.taken;
  }

  /** Lines read so far. */
  get lines(): number {
    return this.lineNumber;
  }

  /** Starts reading the next chunk into `spare`. */
  private readAhead(): void {
    const into = this.spare;
    const position = this.taken;
    const length = Math.min(this.chunkBytes, this.stop - position);
    this.chunkBytes = CHUNK_BYTES;
    this.pending = length <= 0 ? Promise.resolve(0) : this.handle.read(into, HEAD_BYTES, length, position).then((r) => r.bytesRead);
  }

  /** Reads the next chunk and hands its complete lines to `visitor`; false once the file is done. */
  async next(visitor: LineVisitor): Promise<boolean> {
    if (this.ended) return false;
    if (!this.pending) this.readAhead();
    const bytesRead = await this.pending!;
    this.pending = undefined;
    const incoming = this.spare;
    const dataOffset = this.taken;
    this.taken += bytesRead;
    // The unfinished line goes right before the new data: into the head room, or (longer) into `wide` with the data after it.
    let buffer: Buffer;
    let start: number;
    let end: number;
    if (this.carry <= HEAD_BYTES) {
      this.buffer.copy(incoming, HEAD_BYTES - this.carry, this.carryAt, this.carryAt + this.carry);
      buffer = incoming;
      start = HEAD_BYTES - this.carry;
      end = HEAD_BYTES + bytesRead;
      this.base = dataOffset - HEAD_BYTES;
    } else {
      const size = this.carry + bytesRead;
      if (!this.wide || this.wide.length < size) this.wide = Buffer.allocUnsafe(Math.max(size, (this.wide?.length ?? 0) * 2));
      this.buffer.copy(this.wide, 0, this.carryAt, this.carryAt + this.carry);
      incoming.copy(this.wide, this.carry, HEAD_BYTES, HEAD_BYTES + bytesRead);
      buffer = this.wide;
      start = 0;
      end = size;
      this.base = dataOffset - this.carry;
    }
    this.buffer = buffer;
    // The other read buffer is free now (the unfinished line is copied out of it).
    this.spare = incoming === this.first ? this.second : this.first;
    // The file's next chunk is read while this one is scanned.
    if (bytesRead > 0) this.readAhead();
    if (dataOffset === 0 && bytesRead >= 3 && buffer[start] === 0xef && buffer[start + 1] === 0xbb && buffer[start + 2] === 0xbf) start += 3;
    if (visitor.lines && this.skipping === 0 && end > start) {
      const last = buffer.lastIndexOf(NEWLINE, end - 1);
      const read = last >= start ? visitor.lines(buffer, start, last + 1, this.lineNumber + 1, this.base, this.checkpoints) : undefined;
      if (read !== undefined) {
        this.lineNumber += read;
        start = last + 1;
      }
    }
    for (let at = buffer.indexOf(NEWLINE, start); at >= 0 && at < end; at = buffer.indexOf(NEWLINE, start)) {
      this.emit(visitor, start, at);
      start = at + 1;
    }
    if (bytesRead === 0) {
      this.ended = true;
      if (this.skipping > 0) {
        if (isCheckpointLine(this.lineNumber + 1)) this.checkpoints.push(this.skipOffset);
        visitor.tooLong(++this.lineNumber, this.skipping + (end - start), this.skipOffset);
      } else if (end > start) this.emit(visitor, start, end);
      await this.close();
      return false;
    }
    if (this.skipping > 0) {
      this.skipping += end - start;
      start = end;
    } else if (end - start > MAX_LINE_BYTES) {
      // The unfinished line is too long: skip it, holding none of it.
      this.skipping = end - start;
      this.skipOffset = this.base + start;
      start = end;
    }
    this.carryAt = start;
    this.carry = end - start;
    return true;
  }

  private emit(visitor: LineVisitor, start: number, newline: number): void {
    const line = ++this.lineNumber;
    if (this.skipping > 0) {
      if (isCheckpointLine(line)) this.checkpoints.push(this.skipOffset);
      visitor.tooLong(line, this.skipping + (newline - start), this.skipOffset);
      this.skipping = 0;
      return;
    }
    const offset = this.base + start;
    if (isCheckpointLine(line)) this.checkpoints.push(offset);
    const end = newline > start && this.buffer[newline - 1] === CR ? newline - 1 : newline;
    if (end - start > MAX_LINE_BYTES) visitor.tooLong(line, newline - start, offset);
    else visitor.line(this.buffer, start, end, line, offset);
  }

  async close(): Promise<void> {
    this.ended = true;
    await this.pending?.catch(() => {});
    this.pending = undefined;
    await this.handle.close().catch(() => {});
  }
}

/** The lines `reader` reads, as text (see module rules); the reader is closed at the end. */
export async function* textLines(reader: LineReader): AsyncGenerator<InputLine> {
  let lines: InputLine[] = [];
  const visitor: LineVisitor = {
    line: (buffer, start, end, line) => void lines.push({ line, text: buffer.toString("utf8", start, end) }),
    tooLong: (line, bytes) => void lines.push({ line, tooLong: bytes }),
  };
  try {
    for (let more = true; more;) {
      more = await reader.next(visitor);
      const chunk = lines;
      lines = [];
      yield* chunk;
    }
  } finally {
    await reader.close();
  }
}

/** The lines of `file`, as text (see module rules). */
export async function* readTextLines(file: string): AsyncGenerator<InputLine> {
  yield* textLines(await LineReader.open(file));
}

/** The bytes of line `line` of `file` (no `\r\n`), read again from the reader's `checkpoints`; undefined past the end or when too long. */
export function lineAt(file: string, line: number, checkpoints: readonly number[]): Buffer | undefined {
  const mark = Math.floor((line - 1) / CHECKPOINT_LINES);
  if (mark >= checkpoints.length) return undefined;
  const fd = openSync(file, "r");
  try {
    let skip = line - 1 - mark * CHECKPOINT_LINES;
    let position = checkpoints[mark]!;
    const chunk = Buffer.allocUnsafe(256 * 1024);
    const parts: Buffer[] = [];
    let length = 0;
    for (;;) {
      const bytesRead = readSync(fd, chunk, 0, chunk.length, position);
      if (bytesRead === 0) break;
      let start = 0;
      while (skip > 0) {
        const newline = chunk.indexOf(NEWLINE, start);
        if (newline < 0 || newline >= bytesRead) break;
        start = newline + 1;
        skip--;
      }
      if (skip > 0) {
        position += bytesRead;
        continue;
      }
      const newline = chunk.indexOf(NEWLINE, start);
      const stop = newline >= 0 && newline < bytesRead ? newline : bytesRead;
      parts.push(Buffer.from(chunk.subarray(start, stop)));
      length += stop - start;
      if (stop < bytesRead || length > MAX_LINE_BYTES) break;
      position += bytesRead;
    }
    if (skip > 0 || length > MAX_LINE_BYTES) return undefined;
    const bytes = Buffer.concat(parts);
    return bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.subarray(0, -1) : bytes;
  } finally {
    closeSync(fd);
  }
}

/** Where the lines of one byte range of a file are: its first line's number and its reader's checkpoints (numbered from that line). */
export interface LineSegment {
  firstLine: number;
  checkpoints: readonly number[];
}

/** `lineAt` for a file read as consecutive ranges (`segments` in line order). */
export function lineInSegments(file: string, line: number, segments: readonly LineSegment[]): Buffer | undefined {
  for (let k = segments.length - 1; k >= 0; k--) {
    const segment = segments[k]!;
    if (line >= segment.firstLine) return lineAt(file, line - segment.firstLine + 1, segment.checkpoints);
  }
  return undefined;
}
