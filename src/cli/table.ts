/** Plain-text tables for listings on a terminal (`tools list`, `sessions list`). */

/** `text` on one line: runs of whitespace become one space. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** Aligned columns; the last column is cut to fit `width`. */
export function formatTable(header: string[], rows: string[][], width: number): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  return all
    .map((r) => {
      const fixed = r.slice(0, -1).map((cell, i) => cell.padEnd(widths[i])).join("  ");
      const room = Math.max(20, width - fixed.length - 2);
      const last = r[r.length - 1];
      return `${fixed}  ${last.length > room ? `${last.slice(0, room - 1)}…` : last}`.trimEnd();
    })
    .join("\n");
}
