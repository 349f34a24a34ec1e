/**
 * The README's install from a git URL works: npm clones the repository, installs its dev
 * dependencies and builds it (`prepack`) before packing it, so the package made from a bare git
 * URL carries a built dist/ and runs. Tested with a `git+file://` URL of a clone of this
 * repository's HEAD (the committed tree); npm takes the dependencies from its cache where it can.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";

const run = promisify(execFile);
let root: string | undefined;

/** The caller's environment without the npm_* settings of an enclosing `npm test`. */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) && key.toLowerCase() !== "npm_config_cache") continue;
    env[key] = value;
  }
  return env;
}

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe("npm pack git+file://CLONE (the README's git URL install)", () => {
  it("builds the package from the bare git URL: a built dist/ is in it", async () => {
    root = await mkdtemp(join(tmpdir(), "yiem-git-"));
    const clone = join(root, "yiem");
    await run("git", ["clone", "--quiet", "--no-hardlinks", repoRoot, clone], { timeout: 60_000 });
    const out = join(root, "out");
    await mkdir(out);
    let packed: { stdout: string };
    try {
      packed = await run("npm", ["pack", "--json", "--prefer-offline", "--no-audit", "--no-fund", "--pack-destination", out, `git+file://${clone}`], {
        cwd: root, env: npmEnv(), timeout: 280_000, maxBuffer: 32 * 1024 * 1024,
      });
    } catch (error) {
      const e = error as { stderr?: string; message: string };
      throw new Error(`npm pack of the git URL failed:\n${e.stderr || e.message}`);
    }
    const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = info.files.map((f) => f.path);
    for (const file of ["bin/yiem.js", "dist/cli/main.js", "dist/index.js", "schema/agent.schema.json", "configs/review.yaml"]) expect(files, file).toContain(file);
    expect(existsSync(join(out, info.filename))).toBe(true);
    const unpacked = join(root, "unpacked");
    await mkdir(unpacked);
    await run("tar", ["-xzf", join(out, info.filename), "-C", unpacked]);
    // dist/ was built from the clone's sources: valid JavaScript, the entry point exporting main.
    for (const file of ["dist/cli/main.js", "dist/index.js"]) await run(process.execPath, ["--check", join(unpacked, "package", file)], { timeout: 30_000 });
    const version = await run(process.execPath, [join(unpacked, "package", "bin", "yiem.js"), "--version"], { cwd: unpacked, timeout: 30_000 });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  }, 300_000);
});
