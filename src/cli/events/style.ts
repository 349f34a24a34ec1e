/**
 * Colours and small formatters for the human (pretty) event view.
 * Rules: colour only through {@link createStyle}; with colour off every function is the identity,
 * so plain output carries no escape codes at all.
 */

export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

const sgr = (open: number, close: number) => (s: string) => (s === "" ? s : `\x1b[${open}m${s}\x1b[${close}m`);
const identity = (s: string) => s;

export function createStyle(color: boolean): Style {
  if (!color) return { bold: identity, dim: identity, red: identity, green: identity, yellow: identity, cyan: identity };
  return { bold: sgr(1, 22), dim: sgr(2, 22), red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39), cyan: sgr(36, 39) };
}

/**
 * The default colour decision: a non-empty `NO_COLOR` turns colour off; otherwise a non-empty
 * `FORCE_COLOR` other than "0"/"false" turns it on; otherwise colour is on for a TTY whose `TERM`
 * is not "dumb".
 */
export function shouldUseColor(isTTY: boolean, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR) return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== "") return force !== "0" && force !== "false";
  return isTTY && env.TERM !== "dumb";
}

/** `850ms`, `1.2s`, `2m 05s`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "?";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const totalSeconds = Math.round(ms / 1000);
  const minutes = Math.floor(totalSeconds / 60);
  return `${minutes}m ${String(totalSeconds % 60).padStart(2, "0")}s`;
}

/** `1234567` → `1,234,567`, independent of the locale. */
export function formatCount(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** `1 turn`, `2 turns`. */
export function plural(n: number, word: string): string {
  return `${formatCount(n)} ${word}${n === 1 ? "" : "s"}`;
}

/** Cuts `s` to at most `max` characters (code points), ending with `…` when cut. */
export function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  const points = Array.from(s.slice(0, max * 2 + 2));
  if (points.length <= max) return points.join("");
  return points.slice(0, Math.max(0, max - 1)).join("") + "…";
}
