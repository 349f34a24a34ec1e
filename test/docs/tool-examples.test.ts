/**
 * The tool files the docs show work as written: README.md's `tools/shout.ts` ("Writing a tool")
 * and docs/tools.md's `repeat` ("The TypeScript form"), each copied verbatim into a fresh tool
 * folder, load with no problem and answer `yiem tools call` as their text says (schema defaults
 * filled in, scalars coerced, bad arguments refused with exit 2).
 */
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";
import { fences } from "../support/markdown.js";

const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
const toolsDoc = readFileSync(join(repoRoot, "docs/tools.md"), "utf8");

/** The one `ts` block of `markdown` that holds `marker`. */
function tsBlock(markdown: string, marker: string): string {
  const found = fences(markdown).filter((f) => f.lang === "ts" && f.body.includes(marker));
  expect(found, marker).toHaveLength(1);
  return found[0].body;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-doc-tools-"));
  await mkdir(join(dir, "tools"));
  await writeFile(join(dir, "agent.config.yaml"), "model: gpt-4o-mini\ntoolDirs: [tools]\n");
  await writeFile(join(dir, "tools", "shout.ts"), tsBlock(readme, "// tools/shout.ts"));
  await writeFile(join(dir, "tools", "repeat.ts"), tsBlock(toolsDoc, 'name: "repeat"'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const call = (name: string, args: string) => runCli(["tools", "call", name, "--args", args, "--events", "none"], { cwd: dir });

describe("the tool examples of the docs, as written", () => {
  it("load with no problem", async () => {
    const r = await runCli(["tools", "check"], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("no problems");
  });

  it("README's shout upper-cases its text", async () => {
    const r = await call("shout", '{"text": "to be or not to be"}');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("TO BE OR NOT TO BE\n");
  });

  it("docs/tools.md's repeat gets its default (2) and a coerced \"3\"", async () => {
    const twice = await call("repeat", '{"text": "ab"}');
    expect(twice.code, twice.stderr).toBe(0);
    expect(twice.stdout).toBe("abab\n");
    const thrice = await call("repeat", '{"text": "ab", "times": "3"}');
    expect(thrice.code, thrice.stderr).toBe(0);
    expect(thrice.stdout).toBe("ababab\n");
  });

  it("arguments against the schema are refused before execute (exit 2)", async () => {
    const r = await call("repeat", '{"text": "", "times": 11}');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Invalid arguments for tool "repeat"/);
    expect(r.stdout).toBe("");
  });
});
