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
 * - Chunks are read synchronously (a 4 MiB read of a cached file is a copy; the hop to libuv's
 *   thread pool and back cost more than the read on a loaded machine), and every YIELD_EVERY
 *   chunks `next` waits for the event loop's next turn, so signals and timers still run.
 */
import { openSync, readSync, closeSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";

export const MAX_LINE_BYTES = 16 * 1024 * 1024;
const CHUNK_BYTES = 4 * 1024 * 1024;
export const CHECKPOINT_LINES = 1024;
const YIELD_EVERY = 4;
const NEWLINE = 0x0a;
const CR = 0x0d;

/** One line as text, by its 1-based number: its text, or (past MAX_LINE_BYTES) its length. */
export type InputLine = { line: number; text: string } | { line: number; tooLong: number };

/** Receives every line of one chunk; `start`..`end` are the line's bytes in `buffer` (no `\r\n`). */
export interface LineVisitor {
  line(buffer: Buffer, start: number, end: number, line: number, offset: number): void;
  tooLong(line: number, bytes: number, offset: number): void;
}

/** Reads a file's lines chunk by chunk (see module rules). */
export class LineReader {
  private buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  /** Bytes of an unfinished line kept at the start of `buffer`. */
  private carry = 0;
  /** The file offset of buffer[0]. */
  private base = 0;
  private lineNumber = 0;
  /** While skipping a line that is too long: its bytes so far (0: not skipping). */
  private skipping = 0;
  private skipOffset = 0;
  private ended = false;
  private chunks = 0;
  /** checkpoints[k]: the offset of line k × CHECKPOINT_LINES + 1. */
  readonly checkpoints: number[] = [];

  private constructor(private readonly handle: FileHandle) {}

  static async open(file: string): Promise<LineReader> {
    return new LineReader(await open(file, "r"));
  }

  /** The file's size when opened, in bytes. */
  async size(): Promise<number> {
    return (await this.handle.stat()).size;
  }

  /** Bytes read so far, as lines or the unfinished line kept (the file offset of the buffer's end). */
  get bytesRead(): number {
    return this.base + this.carry;
  }

  /** Lines read so far. */
  get lines(): number {
    return this.lineNumber;
  }

  /** Reads the next chunk and hands its complete lines to `visitor`; false once the file is done. */
  async next(visitor: LineVisitor): Promise<boolean> {
    if (this.ended) return false;
    if (this.carry === this.buffer.length) this.growOrSkip();
    if (++this.chunks % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
    const bytesRead = readSync(this.handle.fd, this.buffer, this.carry, this.buffer.length - this.carry, null);
    let end = this.carry + bytesRead;
    let start = 0;
    if (this.base === 0 && this.carry === 0 && this.lineNumber === 0 && end >= 3 && this.buffer[0] === 0xef && this.buffer[1] === 0xbb && this.buffer[2] === 0xbf) start = 3;
    const buffer = this.buffer;
    for (let at = buffer.indexOf(NEWLINE, start); at >= 0 && at < end; at = buffer.indexOf(NEWLINE, start)) {
      this.emit(visitor, start, at);
      start = at + 1;
    }
    if (bytesRead === 0) {
      this.ended = true;
      if (this.skipping > 0) {
        if (this.lineNumber % CHECKPOINT_LINES === 0) this.checkpoints.push(this.skipOffset);
        visitor.tooLong(++this.lineNumber, this.skipping + (end - start), this.skipOffset);
      }
      else if (end > start) this.emit(visitor, start, end);
      await this.close();
      return false;
    }
    if (this.skipping > 0) {
      this.skipping += end - start;
      this.base += end;
      end = start = 0;
    }
    buffer.copy(buffer, 0, start, end);
    this.base += start;
    this.carry = end - start;
    return true;
  }

  private emit(visitor: LineVisitor, start: number, newline: number): void {
    const line = ++this.lineNumber;
    if (this.skipping > 0) {
      if ((line - 1) % CHECKPOINT_LINES === 0) this.checkpoints.push(this.skipOffset);
      visitor.tooLong(line, this.skipping + (newline - start), this.skipOffset);
      this.skipping = 0;
      return;
    }
    const offset = this.base + start;
    if ((line - 1) % CHECKPOINT_LINES === 0) this.checkpoints.push(offset);
    const end = newline > start && this.buffer[newline - 1] === CR ? newline - 1 : newline;
    if (end - start > MAX_LINE_BYTES) visitor.tooLong(line, newline - start, offset);
    else visitor.line(this.buffer, start, end, line, offset);
  }

  /** The buffer is full of one unfinished line: grow it, or start skipping the line once it is too long. */
  private growOrSkip(): void {
    if (this.carry > MAX_LINE_BYTES) {
      this.skipping = this.carry;
      this.skipOffset = this.base;
      this.base += this.carry;
      this.carry = 0;
      return;
    }
    const bigger = Buffer.allocUnsafe(Math.min(this.buffer.length * 2, MAX_LINE_BYTES + CHUNK_BYTES));
    this.buffer.copy(bigger, 0, 0, this.carry);
    this.buffer = bigger;
  }

  async close(): Promise<void> {
    this.ended = true;
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
