/**
 * What `yiem init` writes and prints is right where yiem is installed. Here yiem runs from the
 * repository, as from a global install (not under the project's node_modules): the `$schema`
 * line and the docs path are absolute paths of this package's files that exist, the command to
 * try is `yiem`, and `init --example` copies every example spec the README uses, which then
 * load. A `-c` file that is not found but is one of the package's example specs says where it
 * is. (The project-install case, relative paths under node_modules: test/pack-install.test.ts.)
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "yiem-init-install-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The `$schema=` path and the docs paths a spec file names, resolved from its folder. */
function references(file: string): { schema: string; docs: string[] } {
  const text = readFileSync(file, "utf8");
  const schema = /\$schema=(\S+)/.exec(text)?.[1];
  expect(schema, `${file} has a $schema line`).toBeDefined();
  const docs = [...text.matchAll(/^#.*?(\S*docs\/[\w-]+\.md)/gm)].map((m) => m[1]);
  return { schema: schema!, docs };
}

describe("yiem init from a global install", () => {
  it("plain init: the $schema line and the docs path are the package's own files", async () => {
    const dir = join(root, "plain");
    const r = await runCli(["init", "--dir", dir]);
    expect(r.code, r.stderr).toBe(0);
    const { schema, docs } = references(join(dir, "agent.config.yaml"));
    expect(schema).toBe(join(repoRoot, "schema", "agent.schema.json"));
    expect(docs).toEqual([join(repoRoot, "docs", "spec.md")]);
    for (const path of [schema, ...docs]) expect(existsSync(path), path).toBe(true);
    expect(readFileSync(join(dir, "agent.config.yaml"), "utf8")).toContain('# For an offline try-out: yiem run --model replay:FILE "…"');
  });

  it("init --example copies every example spec of the README, with references that resolve, and they load", async () => {
    const dir = join(root, "example");
    const r = await runCli(["init", "--example", "--dir", dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('yiem: try it offline: cd ');
    expect(r.stderr).toMatch(/&& yiem run -m replay:configs\/demo\.replay\.jsonl "What time is it in Tokyo\?"\n$/);
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const used = [...new Set([...readme.matchAll(/configs\/[\w-]+\.yaml/g)].map((m) => m[0]))];
    expect(used.sort()).toEqual(["configs/review.yaml", "configs/scaffold.yaml", "configs/weather.yaml"]);
    for (const file of ["agent.config.yaml", ...used]) {
      expect(existsSync(join(dir, file)), file).toBe(true);
      const { schema, docs } = references(join(dir, file));
      expect(isAbsolute(schema), schema).toBe(true);
      for (const path of [schema, ...docs]) expect(existsSync(path), `${file}: ${path}`).toBe(true);
      expect(readFileSync(join(dir, file), "utf8"), file).not.toMatch(/npx yiem/);
    }
    for (const file of used) {
      const loaded = await runCli(["run", "--dry-run", "-c", file, "hi"], { cwd: dir });
      expect(loaded.code, `${file}: ${loaded.stderr}`).toBe(0);
    }
    expect(existsSync(join(dir, "configs", "generated-tools"))).toBe(true);
  });

  it("a -c example spec that is not here says where the package has it", async () => {
    const dir = join(root, "empty");
    await runCli(["init", "--dir", dir]);
    const r = await runCli(["config", "-c", "configs/review.yaml"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `yiem: config file configs/review.yaml not found; the yiem package has an example of that name: ${join(repoRoot, "configs", "review.yaml")} (yiem init --example copies the example specs into a folder)\n`,
    );
    const other = await runCli(["config", "-c", "nothing.yaml"], { cwd: dir });
    expect(other.stderr).toBe("yiem: config file nothing.yaml not found\n");
  });
});
