/**
 * The one "did you mean" rule, for unknown flags, commands and spec keys. A known name is close
 * to what was typed when:
 * - both are the same once case and the separators `-` and `_` are ignored (`baseUrl` → `baseURL`,
 *   `--maxturns` → `--max-turns`); or
 * - they differ by at most one edit per four letters of what was typed, and by at least one
 *   (an edit is a missing, extra, wrong or swapped letter): `--modle` → `--model`,
 *   `toolDir` → `toolDirs`, never `--max-tokens` → `--max-turns` (three edits in nine letters:
 *   a different word, not a typo); or
 * - what was typed starts exactly one of the known names (`--mod` → `--model`).
 * The nearest close name wins; a tie goes to the first one listed.
 */

/** The known name nearest to `typed`, or undefined when none is close (rule above). */
export function nearestName(typed: string, known: readonly string[]): string | undefined {
  const word = comparable(typed);
  if (word.length < 2) return undefined;
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(word, comparable(name));
    if (distance <= maxEdits(word) && (!best || distance < best.distance)) best = { name, distance };
  }
  if (best) return best.name;
  const prefixed = known.filter((name) => comparable(name).startsWith(word));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/** Whether `known` is close to `typed` by the edit rule above (the prefix rule aside). */
export function isCloseName(typed: string, known: string): boolean {
  const word = comparable(typed);
  return word.length >= 2 && editDistance(word, comparable(known)) <= maxEdits(word);
}

/** Case and separators do not count: `max-turns`, `maxTurns` and `max_turns` compare equal. */
function comparable(name: string): string {
  return name.toLowerCase().replace(/[-_]/g, "");
}

/** One edit per four letters, at least one. */
function maxEdits(word: string): number {
  return Math.max(1, Math.floor(word.length / 4));
}

/** Edit distance with adjacent transpositions counted as one edit (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}
