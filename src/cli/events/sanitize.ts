/**
 * Neutralising untrusted text (model output, tool results) before it reaches a terminal, and
 * keeping serialised JSON one line for line-splitting readers.
 *
 * Rules:
 * - Complete escape sequences are removed whole: CSI (`ESC [` or C1 `\x9b`), the string
 *   sequences OSC/DCS/SOS/PM/APC (`ESC ] P X ^ _` or C1 `\x9d \x90 \x98 \x9e \x9f`) up to their
 *   BEL or ST terminator, and two-character `ESC <final>` sequences.
 * - Every other C0 control (including CR and bare ESC), DEL and every C1 control is removed.
 *   An unterminated sequence thus loses its introducer and its payload shows as plain text.
 * - Newline and tab are kept. Unicode bidi embedding/override/isolate controls are removed too,
 *   so text cannot visually reorder what follows it.
 * - One left-to-right pass: the time is linear in the text's length, whatever it holds (the search
 *   for a string sequence's terminator is shared by every introducer before that terminator).
 */

const UNSAFE_CHAR = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

const HAS_UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

const ESC = 0x1b;
const BEL = 0x07;
const C1_ST = 0x9c;
const C1_CSI = 0x9b;

/** `ESC x` introducing a string sequence (OSC ] , DCS P, SOS X, PM ^, APC _). */
const isStringIntroAfterEsc = (c: number) => c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f;
/** The C1 forms of the same: DCS, SOS, OSC, PM, APC. */
const isC1StringIntro = (c: number) => c === 0x90 || c === 0x98 || c === 0x9d || c === 0x9e || c === 0x9f;

/** Returns `s` with every terminal control sequence and control character removed (see module rules). */
export function sanitizeForTerminal(s: string): string {
  if (!HAS_UNSAFE.test(s)) return s;
  const n = s.length;
  const parts: string[] = [];
  /** First index ≥ the last search start holding BEL, ESC or C1 ST (n when none): see `stringEnd`. */
  let stop = -1;

  /** End (exclusive) of a string sequence whose payload starts at `from`, or -1 when it is unterminated. */
  const stringEnd = (from: number): number => {
    if (from > stop) {
      stop = from;
      while (stop < n) {
        const c = s.charCodeAt(stop);
        if (c === BEL || c === ESC || c === C1_ST) break;
        stop++;
      }
    }
    if (stop >= n) return -1;
    const c = s.charCodeAt(stop);
    if (c === BEL || c === C1_ST) return stop + 1;
    return s.charCodeAt(stop + 1) === 0x5c ? stop + 2 : -1;
  };
  /** End of a CSI whose parameters start at `from` (`[0-?]*[ -/]*[@-~]`), or -1. */
  const csiEnd = (from: number): number => {
    let j = from;
    while (j < n && s.charCodeAt(j) >= 0x30 && s.charCodeAt(j) <= 0x3f) j++;
    while (j < n && s.charCodeAt(j) >= 0x20 && s.charCodeAt(j) <= 0x2f) j++;
    return j < n && s.charCodeAt(j) >= 0x40 && s.charCodeAt(j) <= 0x7e ? j + 1 : -1;
  };
  /** End of `ESC [ -/]* [0-~]` with ESC at `at`, or -1. */
  const escEnd = (at: number): number => {
    let j = at + 1;
    while (j < n && s.charCodeAt(j) >= 0x20 && s.charCodeAt(j) <= 0x2f) j++;
    return j < n && s.charCodeAt(j) >= 0x30 && s.charCodeAt(j) <= 0x7e ? j + 1 : -1;
  };

  UNSAFE_CHAR.lastIndex = 0;
  let kept = 0;
  for (let match = UNSAFE_CHAR.exec(s); match; match = UNSAFE_CHAR.exec(s)) {
    const at = match.index;
    const c = s.charCodeAt(at);
    let end = -1;
    if (c === ESC) {
      const next = at + 1 < n ? s.charCodeAt(at + 1) : -1;
      if (isStringIntroAfterEsc(next)) end = stringEnd(at + 2);
      else if (next === 0x5b) end = csiEnd(at + 2);
      if (end < 0) end = escEnd(at);
    } else if (c === C1_CSI) end = csiEnd(at + 1);
    else if (isC1StringIntro(c)) end = stringEnd(at + 1);
    if (end < 0) end = at + 1;
    if (at > kept) parts.push(s.slice(kept, at));
    kept = end;
    UNSAFE_CHAR.lastIndex = end;
  }
  if (kept < n) parts.push(s.slice(kept));
  return parts.join("");
}

const JSON_TERMINAL_UNSAFE = /[\x7f-\x9f\u2028\u2029]/g;

/**
 * Makes serialised JSON safe to print on a terminal without changing its meaning: DEL, C1
 * controls and U+2028/U+2029 (which `JSON.stringify` leaves raw) become `\uXXXX` escapes.
 * Valid only for `JSON.stringify` output, where such characters can only occur inside strings.
 */
export function escapeJsonForTerminal(json: string): string {
  return json.replace(JSON_TERMINAL_UNSAFE, escapeChar);
}

const LINE_BREAKING = /[\u0085\u2028\u2029]/;
const LINE_BREAKING_ALL = /[\u0085\u2028\u2029]/g;

/**
 * Makes serialised JSON safe for readers that split lines on more than `\n` (Python's
 * `splitlines`, JavaScript source, many editors): U+0085 NEL, U+2028 and U+2029, which
 * `JSON.stringify` leaves raw, become `\uXXXX` escapes. Same validity rule as above.
 */
export function escapeJsonLineBreaks(json: string): string {
  return LINE_BREAKING.test(json) ? json.replace(LINE_BREAKING_ALL, escapeChar) : json;
}

function escapeChar(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}
