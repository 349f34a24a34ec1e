/**
 * Session ids. Rules:
 * - An id becomes a file name (`<id>.json` in the store) only after `checkSessionId`: a letter or
 *   digit, then letters, digits, `_` or `-`, 64 characters at most (`pr-123`, `nightly_2`). No
 *   dot, slash or space can reach the file system.
 * - A generated id is `YYYYMMDD-HHMMSS-xxxxxx` (UTC time, then 6 random hex digits): ids sort by
 *   creation time and two runs in the same second still differ.
 * - `--resume` takes a full id or a unique prefix of one (`resolveSessionId`).
 */
import { randomHex } from "../random-id.js";
import { editDistance } from "../nearest-name.js";

export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Why `id` cannot be a session id, or undefined when it can. */
export function sessionIdProblem(id: string): string | undefined {
  if (SESSION_ID_PATTERN.test(id)) return undefined;
  return `${JSON.stringify(id)} is not a valid session id (a letter or digit, then letters, digits, _ or -, 64 characters at most)`;
}

export function generateSessionId(now: Date = new Date()): string {
  const iso = now.toISOString(); // 2026-12-01T19:56:05.123Z
  const stamp = `${iso.slice(0, 10).replace(/-/g, "")}-${iso.slice(11, 19).replace(/:/g, "")}`;
  return `${stamp}-${randomHex(3)}`;
}

/** The result of looking an id up among the stored ones. */
export type IdMatch =
  | { kind: "found"; id: string }
  | { kind: "ambiguous"; matches: string[] }
  | { kind: "missing"; nearest: string[] };

/** A full id, else a unique prefix of one (rules above); at most 5 nearest ids for a miss. */
export function resolveSessionId(typed: string, ids: string[]): IdMatch {
  if (ids.includes(typed)) return { kind: "found", id: typed };
  const matches = ids.filter((id) => id.startsWith(typed)).sort();
  if (matches.length === 1) return { kind: "found", id: matches[0] };
  if (matches.length > 1) return { kind: "ambiguous", matches };
  return { kind: "missing", nearest: nearestIds(typed, ids) };
}

/** The ids closest to `typed`: sharing the longest prefix first, then by edit distance. */
export function nearestIds(typed: string, ids: string[], count = 5): string[] {
  const shared = (id: string) => {
    let n = 0;
    while (n < id.length && n < typed.length && id[n] === typed[n]) n++;
    return n;
  };
  return [...ids]
    .map((id) => ({ id, prefix: shared(id), distance: editDistance(typed, id) }))
    .sort((a, b) => b.prefix - a.prefix || a.distance - b.distance || a.id.localeCompare(b.id))
    .slice(0, count)
    .map((entry) => entry.id);
}
