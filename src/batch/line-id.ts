/**
 * The id of an input line read from its bytes, for the check pass (docs/batch.md, "Bad lines, and
 * the check pass"): most lines of a big input are `{"id":"…",…}` or `{"custom_id":"…",…}` with
 * a plain id first, or plain text, and their id can be read without decoding or parsing the line.
 *
 * Rules:
 * - The fast path must give exactly the id `parseItem` (./input.ts) gives, or give up
 *   (undefined) and leave the line to `idOfText`, which parses it. It reads:
 *   - a line of ASCII whitespace only: blank (null);
 *   - a line whose first non-blank byte is ASCII and not `{`: a string or plain line, its number;
 *   - `{"id":"X"` or `{"custom_id":"X"` at the line's first byte, X printable ASCII without `"`
 *     or `\`, 1 to MAX_ID_CHARS long, followed by `,` or `}`; and the rest of the line holds no
 *     `\u` (an escaped key could spell id or custom_id) and no `"id"` or `_id"` (a repeated key
 *     wins in JSON.parse; a custom_id key makes the line a batch-request line).
 * - Anything else (leading whitespace inside the braces, a number id, escapes, non-ASCII) gives up.
 */
import { idOfText, MAX_ID_CHARS } from "./input.js";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ID_KEY = Buffer.from('{"id":"');
const CUSTOM_ID_KEY = Buffer.from('{"custom_id":"');
const KEY_END = Buffer.from('id"');
const UNICODE_ESCAPE = Buffer.from("\\u");

/** The line's id by the fast path (see module rules): a string, null for a blank line, undefined when it gives up. */
export function fastLineId(buffer: Buffer, start: number, end: number, line: number): string | null | undefined {
  let at = start;
  while (at < end && (buffer[at] === 0x20 || (buffer[at]! >= 0x09 && buffer[at]! <= 0x0d))) at++;
  if (at === end) return null;
  const first = buffer[at]!;
  if (first >= 0x80) return undefined;
  if (first !== 0x7b) return String(line);
  if (at !== start) return undefined;
  const custom = buffer[start + 2] === 0x63; // {"c…
  if (!startsWith(buffer, start, end, custom ? CUSTOM_ID_KEY : ID_KEY)) return undefined;
  const idStart = start + (custom ? CUSTOM_ID_KEY.length : ID_KEY.length);
  const idEnd = Math.min(end, idStart + MAX_ID_CHARS + 1);
  let close = idStart;
  for (; close < idEnd; close++) {
    const c = buffer[close]!;
    if (c === QUOTE) break;
    if (c < 0x20 || c > 0x7e || c === BACKSLASH) return undefined;
  }
  if (close === idStart || close === idEnd || buffer[close] !== QUOTE) return undefined;
  const after = buffer[close + 1];
  if (after !== 0x2c && after !== 0x7d) return undefined;
  const rest = buffer.subarray(close + 1, end);
  if (rest.indexOf(UNICODE_ESCAPE) >= 0) return undefined;
  // `id"` ends both keys that matter: `"id"` (a repeated id) and `_id"` (custom_id).
  for (let at = rest.indexOf(KEY_END); at >= 0; at = rest.indexOf(KEY_END, at + 1)) {
    const before = at > 0 ? rest[at - 1] : undefined;
    if (before === 0x5f || (before === QUOTE && !custom)) return undefined;
  }
  return buffer.toString("latin1", idStart, close);
}

/** The line's id: the fast path, else the line parsed (`idOfText`). Throws InputLineError for a line whose id cannot be read. */
export function lineId(buffer: Buffer, start: number, end: number, line: number): string | null {
  const fast = fastLineId(buffer, start, end, line);
  return fast !== undefined ? fast : idOfText(buffer.toString("utf8", start, end), line);
}

function startsWith(buffer: Buffer, start: number, end: number, prefix: Buffer): boolean {
  if (end - start < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (buffer[start + i] !== prefix[i]) return false;
  return true;
}
