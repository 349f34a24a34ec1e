/**
 * docs/compatibility.md's server table names only test files that exist and
 * profiles that test/support/server-profiles.ts defines, and every profile is named in it.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { profiles } from "../../support/server-profiles.js";
import { repoRoot } from "../../support/cli.js";

const doc = readFileSync(join(repoRoot, "docs", "compatibility.md"), "utf8");
const rows = doc
  .split("\n")
  .filter((line) => line.startsWith("| ") && !line.startsWith("| server |"))
  .map((line) => line.split(" | "));
const testCells = rows.map((cells) => cells[cells.length - 1].replace(/ \|$/, ""));

describe("docs/compatibility.md server table", () => {
  it("has a row per server, each naming at least one test file", () => {
    expect(rows.length).toBeGreaterThanOrEqual(17);
    for (const cell of testCells) expect(cell).toMatch(/`(compat\/)?[a-z-]+\.test\.ts`/);
  });

  it("names only test files that exist, below test/provider/ unless the path starts at test/ (a `-name` short form means compat/name.test.ts)", () => {
    const files = new Set<string>();
    for (const cell of testCells) {
      for (const [, file] of cell.matchAll(/`((?:compat\/|test\/[a-z/]+\/)?[a-z-]+\.test\.ts)`/g)) files.add(file);
      for (const [, short] of cell.matchAll(/`-([a-z-]+)`/g)) files.add(`compat/${short}.test.ts`);
    }
    // A path from the repository's root (`test/cli/…`) is taken as it is.
    // Every test file name in a cell is one the check above reads.
    for (const cell of testCells) for (const [, file] of cell.matchAll(/`([^`]*\.test\.ts)`/g)) expect(files).toContain(file);
    const missing = [...files].filter((file) => !existsSync(file.startsWith("test/") ? join(repoRoot, file) : join(repoRoot, "test", "provider", file)));
    expect(missing).toEqual([]);
    expect(files.size).toBeGreaterThanOrEqual(8);
  });

  it("names only defined profiles, and names every profile", () => {
    const named = new Set(testCells.flatMap((cell) => [...cell.matchAll(/\(`([a-zA-Z]+)`\)/g)].map((m) => m[1])));
    expect([...named].filter((name) => !(name in profiles))).toEqual([]);
    expect(Object.keys(profiles).filter((name) => !named.has(name))).toEqual([]);
  });
});
