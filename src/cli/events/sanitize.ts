/**
 * Neutralising untrusted text (model output, tool results) before it reaches a terminal.
 *
 * Rules:
 * - Complete escape sequences are removed whole: CSI (`ESC [` or C1 `\x9b`), the string
 *   sequences OSC/DCS/SOS/PM/APC (`ESC ] P X ^ _` or C1 `\x9d \x90 \x98 \x9e \x9f`) up to their
 *   BEL or ST terminator, and two-character `ESC <final>` sequences.
 * - Every other C0 control (including CR and bare ESC), DEL and every C1 control is removed.
 *   An unterminated sequence thus loses its introducer and its payload shows as plain text.
 * - Newline and tab are kept. Unicode bidi embedding/override/isolate controls are removed too,
 *   so text cannot visually reorder what follows it.
 */

const SEQUENCE =
  // String sequences with their terminator (BEL, ESC \ or C1 ST).
  /(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b[ -/]*[0-~]/g;

const UNSAFE_CHAR = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

const HAS_UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

/** Returns `s` with every terminal control sequence and control character removed (see module rules). */
export function sanitizeForTerminal(s: string): string {
  if (!HAS_UNSAFE.test(s)) return s;
  return s.replace(SEQUENCE, "").replace(UNSAFE_CHAR, "");
}

const JSON_TERMINAL_UNSAFE = /[\x7f-\x9f\u2028\u2029]/g;

/**
 * Makes serialised JSON safe to print on a terminal without changing its meaning: DEL, C1
 * controls and U+2028/U+2029 (which `JSON.stringify` leaves raw) become `\uXXXX` escapes.
 * Valid only for `JSON.stringify` output, where such characters can only occur inside strings.
 */
export function escapeJsonForTerminal(json: string): string {
  return json.replace(JSON_TERMINAL_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
