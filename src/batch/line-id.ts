/**
 * The id of an input line read from its bytes, for the check pass (docs/batch.md, "Bad lines, and
 * the check pass"): most lines of a big input are `{"id":"…",…}` or `{"custom_id":"…",…}` with
 * a plain id first, or plain text, and their id can be read without decoding or parsing the line,
 * and without making a string of it (the id index hashes its bytes, ./id-index.ts).
 *
 * Rules:
 * - The fast path must give exactly the id `parseItem` (./input.ts) gives, or give up
 *   (UNREAD) and leave the line to `idOfText`, which parses it. It reads:
 *   - a line of ASCII whitespace only: BLANK;
 *   - a line whose first non-blank byte is ASCII and not `{`: a string or plain line, its number
 *     (LINE_NUMBER);
 *   - `{"id":"X"` or `{"custom_id":"X"` at the line's first byte, X printable ASCII without `"`
 *     or `\`, 1 to MAX_ID_CHARS long, followed by `,` or `}`; and the rest of the line holds no
 *     `\u` (an escaped key could spell id or custom_id) and no `"id"` or `_id"` (a repeated key
 *     wins in JSON.parse; a custom_id key makes the line a batch-request line): SPAN, X being
 *     the bytes `idStart`..`idEnd`.
 * - Anything else (leading whitespace inside the braces, a number id, escapes, non-ASCII) gives up.
 * - An IdSpanReader reads the lines of one buffer in increasing order and remembers where the
 *   next `\u` and the next `id"` are (one search finds them for every line before them), so a
 *   line costs one search of its own at most. It starts over when the buffer or its file offset
 *   (`base`) changes.
 */
import { idOfText, MAX_ID_CHARS } from "./input.js";

export const BLANK = 0;
export const LINE_NUMBER = 1;
export const SPAN = 2;
export const UNREAD = 3;
export type IdKind = typeof BLANK | typeof LINE_NUMBER | typeof SPAN | typeof UNREAD;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ID_KEY = Buffer.from('{"id":"');
const CUSTOM_ID_KEY = Buffer.from('{"custom_id":"');
const KEY_END = Buffer.from('id"');
const UNICODE_ESCAPE = Buffer.from("\\u");

/** Reads the ids of lines by the fast path (see module rules). */
export class IdSpanReader {
  /** After SPAN: the id's bytes in the buffer. */
  idStart = 0;
  idEnd = 0;
  private buffer: Buffer | undefined;
  private base = -1;
  /** The next `\u` and the next `id"` at or after the last search's start (buffer.length: none; -1: not searched). */
  private nextEscape = -1;
  private nextKey = -1;

  /** The kind of line `start`..`end` of `buffer` (no `\r\n`); `base`: the file offset of buffer[0]. */
  read(buffer: Buffer, start: number, end: number, base: number): IdKind {
    let at = start;
    while (at < end && (buffer[at] === 0x20 || (buffer[at]! >= 0x09 && buffer[at]! <= 0x0d))) at++;
    if (at === end) return BLANK;
    const first = buffer[at]!;
    if (first >= 0x80) return UNREAD;
    if (first !== 0x7b) return LINE_NUMBER;
    if (at !== start) return UNREAD;
    const custom = buffer[start + 2] === 0x63; // {"c…
    const key = custom ? CUSTOM_ID_KEY : ID_KEY;
    if (end - start < key.length) return UNREAD;
    for (let i = 1; i < key.length; i++) if (buffer[start + i] !== key[i]) return UNREAD;
    const idStart = start + key.length;
    const idEnd = Math.min(end, idStart + MAX_ID_CHARS + 1);
    let close = idStart;
    for (; close < idEnd; close++) {
      const c = buffer[close]!;
      if (c === QUOTE) break;
      if (c < 0x20 || c > 0x7e || c === BACKSLASH) return UNREAD;
    }
    if (close === idStart || close === idEnd || buffer[close] !== QUOTE) return UNREAD;
    const after = buffer[close + 1];
    if (after !== 0x2c && after !== 0x7d) return UNREAD;
    if (buffer !== this.buffer || base !== this.base) {
      this.buffer = buffer;
      this.base = base;
      this.nextEscape = this.nextKey = -1;
    }
    const rest = close + 1;
    if (this.nextEscape < rest) this.nextEscape = found(buffer, buffer.indexOf(UNICODE_ESCAPE, rest));
    if (this.nextEscape < end) return UNREAD;
    // `id"` ends both keys that matter: `"id"` (a repeated id) and `_id"` (custom_id).
    for (;;) {
      if (this.nextKey < rest) this.nextKey = found(buffer, buffer.indexOf(KEY_END, rest));
      const hit = this.nextKey;
      if (hit + KEY_END.length > end) break;
      const before = buffer[hit - 1];
      if (before === 0x5f || (before === QUOTE && !custom)) return UNREAD;
      this.nextKey = found(buffer, buffer.indexOf(KEY_END, hit + 1));
    }
    this.idStart = idStart;
    this.idEnd = close;
    return SPAN;
  }
}

/** The id of a line the fast path reads as SPAN, from the line's first byte `start` (the id is the bytes after its key, up to the next `"`). */
export function spanIdAt(buffer: Buffer, start: number): string {
  const idStart = start + (buffer[start + 2] === 0x63 ? CUSTOM_ID_KEY.length : ID_KEY.length);
  return buffer.toString("latin1", idStart, buffer.indexOf(QUOTE, idStart));
}

/** A search's result as a position: buffer.length when there is none. */
function found(buffer: Buffer, at: number): number {
  return at < 0 ? buffer.length : at;
}

/** The line's id by the fast path alone (see module rules): a string, null for a blank line, undefined when it gives up. */
export function fastLineId(buffer: Buffer, start: number, end: number, line: number): string | null | undefined {
  const reader = new IdSpanReader();
  const kind = reader.read(buffer, start, end, 0);
  return kind === BLANK ? null : kind === LINE_NUMBER ? String(line) : kind === SPAN ? buffer.toString("latin1", reader.idStart, reader.idEnd) : undefined;
}

/** The line's id: the fast path, else the line parsed (`idOfText`). Throws InputLineError for a line whose id cannot be read. */
export function lineId(buffer: Buffer, start: number, end: number, line: number): string | null {
  const fast = fastLineId(buffer, start, end, line);
  return fast !== undefined ? fast : idOfText(buffer.toString("utf8", start, end), line);
}
