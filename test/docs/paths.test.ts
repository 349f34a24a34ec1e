/**
 * The docs name only source and test files that exist: every `src/…` and `test/…` path in
 * README.md and docs/*.md (a `.js` name stands for its `.ts` source; globs and `{a,b}` lists aside).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";

const DOCS = ["README.md", ...readdirSync(join(repoRoot, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** The repo paths a text names: `src/…` or `test/…`, up to a character no path here holds. */
function namedPaths(text: string): string[] {
  const found = text.match(/(?<![\w./-])(?:src|test)\/[\w./{}*,-]*/g) ?? [];
  return [...new Set(found.map((p) => p.replace(/[.,]+$/, "")).filter((p) => !/[*{]/.test(p)))];
}

describe("paths named in the docs", () => {
  it("finds paths to check", () => {
    expect(namedPaths("see `src/loop/run-frame.ts` and test/e2e/, not src/**/x.ts")).toEqual(["src/loop/run-frame.ts", "test/e2e/"]);
  });

  it.each(DOCS)("%s names only files and folders that exist", (doc) => {
    const missing = namedPaths(readFileSync(join(repoRoot, doc), "utf8")).filter(
      (p) => !existsSync(join(repoRoot, p)) && !existsSync(join(repoRoot, p.replace(/\.js$/, ".ts"))),
    );
    expect(missing).toEqual([]);
  });
});
