/**
 * The README's install from git works as written: its `npm pack "git+file://…"` line, run by a
 * shell in a project next to a clone of this repository's HEAD (the committed tree) at ../yiem,
 * makes npm clone it, install its dev dependencies and build it (`prepack`) before packing it, so
 * the tarball it writes carries a built dist/ and runs. npm takes the dependencies from its cache
 * where it can. (The README's next line installs that tarball, as test/e2e/pack-install.test.ts does.)
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";
import { readmeGitInstall } from "../support/markdown.js";

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

describe("the README's npm pack git+file:// line, as written", () => {
  it("builds the package from the clone's git history: a built dist/ is in it", async () => {
    const [packLine] = readmeGitInstall();
    root = await mkdtemp(join(tmpdir(), "yiem-git-"));
    await run("git", ["clone", "--quiet", "--no-hardlinks", repoRoot, join(root, "yiem")], { timeout: 60_000 });
    const project = join(root, "my-agent");
    await mkdir(project);
    try {
      await run("sh", ["-c", packLine], {
        cwd: project, env: { ...npmEnv(), npm_config_prefer_offline: "true", npm_config_audit: "false", npm_config_fund: "false" }, timeout: 280_000, maxBuffer: 32 * 1024 * 1024,
      });
    } catch (error) {
      const e = error as { stderr?: string; message: string };
      throw new Error(`${packLine} failed:\n${e.stderr || e.message}`);
    }
    const tarball = join(project, /# writes (\S+) here/.exec(packLine)![1]);
    expect(existsSync(tarball)).toBe(true);
    const files = (await run("tar", ["-tzf", tarball])).stdout.trim().split("\n").map((f) => f.replace(/^package\//, ""));
    for (const file of ["bin/yiem.js", "dist/cli/main.js", "dist/index.js", "schema/agent.schema.json", "configs/review.yaml"]) expect(files, file).toContain(file);
    const unpacked = join(root, "unpacked");
    await mkdir(unpacked);
    await run("tar", ["-xzf", tarball, "-C", unpacked]);
    // dist/ was built from the clone's sources: valid JavaScript, the entry point exporting main.
    for (const file of ["dist/cli/main.js", "dist/index.js"]) await run(process.execPath, ["--check", join(unpacked, "package", file)], { timeout: 30_000 });
    const version = await run(process.execPath, [join(unpacked, "package", "bin", "yiem.js"), "--version"], { cwd: unpacked, timeout: 30_000 });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  }, 300_000);
});
