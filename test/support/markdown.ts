/**
 * Reading the docs' code blocks, for the tests that run or check what the docs show.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./cli.js";

export interface Fence {
  lang: string;
  body: string;
}

/** Fenced code blocks of a Markdown text, in order. */
export function fences(markdown: string): Fence[] {
  const found: Fence[] = [];
  const pattern = /^```([\w-]*)[^\n]*\n([\s\S]*?)^```\s*$/gm;
  for (const match of markdown.matchAll(pattern)) found.push({ lang: match[1], body: match[2].replace(/\n$/, "") });
  return found;
}

export const isShell = (f: Fence) => ["sh", "bash", "shell", "console"].includes(f.lang);

/**
 * The README's install from the clone's git history: its one shell block holding `git+file://`,
 * as lines (run in the reader's project, the clone at ../yiem).
 */
export function readmeGitInstall(): string[] {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
  const blocks = fences(readme).filter((f) => isShell(f) && f.body.includes("git+file://"));
  if (blocks.length !== 1) throw new Error(`README.md: expected one shell block with a git+file:// install, found ${blocks.length}`);
  return blocks[0].body.split("\n");
}
