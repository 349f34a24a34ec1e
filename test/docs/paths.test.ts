/**
 * The docs name only source and test files that exist: every `src/…` and `test/…` path in
 * README.md and docs/*.md (a `.js` name stands for its `.ts` source; `{a,b}` lists aside), and every
 * `*` glob among them (`src/cli/commands/*.ts`) matches at least one file of its folder.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";

const DOCS = ["README.md", ...readdirSync(join(repoRoot, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** The repo paths a text names: `src/…` or `test/…`, up to a character no path here holds. */
function namedPaths(text: string): string[] {
  const found = text.match(/(?<![\w./-])(?:src|test)\/[\w./{}*,-]*/g) ?? [];
  return [...new Set(found.map((p) => p.replace(/[.,]+$/, "")).filter((p) => !p.includes("{")))];
}

/** Whether a named path exists; a `*` in its last part matches any run of characters but `/`. */
function pathExists(path: string): boolean {
  if (!path.includes("*")) return existsSync(join(repoRoot, path)) || existsSync(join(repoRoot, path.replace(/\.js$/, ".ts")));
  const slash = path.lastIndexOf("/");
  const folder = join(repoRoot, path.slice(0, slash));
  if (path.slice(0, slash).includes("*") || !existsSync(folder)) return false;
  const pattern = new RegExp(`^${path.slice(slash + 1).replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}$`);
  return readdirSync(folder).some((name) => pattern.test(name));
}

describe("paths named in the docs", () => {
  it("finds paths to check", () => {
    expect(namedPaths("see `src/loop/run-frame.ts` and test/e2e/, and src/cli/*.ts, not src/{a,b}.ts")).toEqual([
      "src/loop/run-frame.ts",
      "test/e2e/",
      "src/cli/*.ts",
    ]);
  });

  it("checks a glob against its folder", () => {
    expect(pathExists("src/cli/commands/*.ts")).toBe(true);
    expect(pathExists("test/battery-*.test.ts")).toBe(false);
    expect(pathExists("src/**/x.ts")).toBe(false);
  });

  it.each(DOCS)("%s names only files and folders that exist", (doc) => {
    const missing = namedPaths(readFileSync(join(repoRoot, doc), "utf8")).filter((p) => !pathExists(p));
    expect(missing).toEqual([]);
  });
});
