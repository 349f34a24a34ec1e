/**
 * bin/yiem.js when yiem itself fails: a bundle that throws as it loads (before there is an io)
 * and a `main` that rejects (after the process io exists, so the exit goes through its bounded
 * `exitNow`). Either way: one "yiem: internal error:" line with the error on stderr, nothing on
 * stdout, exit 1, at once. Run on a copy of the built package whose bundle is replaced.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { baseEnv, repoRoot } from "../support/cli.js";

const copies: string[] = [];
afterAll(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** A copy of bin/ and dist/bundle/ whose yiem.cjs is `bundle` (the built one beside it as yiem-built.cjs). */
function packageWithBundle(bundle: string): string {
  const dir = mkdtempSync(join(tmpdir(), "yiem-internal-error-"));
  copies.push(dir);
  mkdirSync(join(dir, "dist"));
  cpSync(join(repoRoot, "bin"), join(dir, "bin"), { recursive: true });
  cpSync(join(repoRoot, "package.json"), join(dir, "package.json"));
  cpSync(join(repoRoot, "dist", "bundle"), join(dir, "dist", "bundle"), { recursive: true });
  cpSync(join(dir, "dist", "bundle", "yiem.cjs"), join(dir, "dist", "bundle", "yiem-built.cjs"));
  writeFileSync(join(dir, "dist", "bundle", "yiem.cjs"), bundle);
  return dir;
}

function run(dir: string) {
  const started = Date.now();
  const r = spawnSync(process.execPath, [join(dir, "bin", "yiem.js"), "tools", "list"], {
    cwd: dir,
    env: baseEnv({ YIEM_CACHE_DIR: join(dir, "cache") }),
    encoding: "utf8",
    timeout: 20_000,
  });
  return { ...r, ms: Date.now() - started };
}

describe("bin/yiem.js on an internal error", () => {
  it("a bundle that throws as it loads: the error on stderr, exit 1", () => {
    const r = run(packageWithBundle('throw new Error("the bundle broke");\n'));
    expect(r.signal).toBeNull();
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^yiem: internal error: Error: the bundle broke\n/);
  });

  it("a main that rejects (the process io exists by then, so the exit is its exitNow): the error on stderr, exit 1", () => {
    const bundle = [
      'const built = require("./yiem-built.cjs");',
      "module.exports = { ...built, main: async () => { throw new Error(\"main broke\"); } };",
      "",
    ].join("\n");
    const r = run(packageWithBundle(bundle));
    expect(r.signal).toBeNull();
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^yiem: internal error: Error: main broke\n/);
    expect(r.ms).toBeLessThan(10_000);
  });
});
