/**
 * yargs' parse kept for the next start (src/cli/parse-cache.ts), seen from the real binary: a
 * successful parse of a repeated command line is kept, keyed by the build and the exact
 * arguments, and used instead of yargs (a planted entry shows it); in a cache inside a project an
 * entry not signed with the user's key is ignored; usage errors, help and `run` lines are never
 * kept. No timings here (bench/startup.mjs measures them).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { baseEnv, repoRoot, yiemBin } from "../support/cli.js";

let dir: string;
let cacheDir: string;
let userCache: string;

function yiem(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [yiemBin, ...args], {
    cwd: repoRoot,
    env: baseEnv({ YIEM_CACHE_DIR: cacheDir, XDG_CACHE_HOME: userCache }),
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const parseFolder = () => join(cacheDir, "parse");
const entries = () => (existsSync(parseFolder()) ? readdirSync(parseFolder()).filter((name) => name.endsWith(".json")).map((name) => join(parseFolder(), name)) : []);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "yiem-parse-cache-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => {
  cacheDir = mkdtempSync(join(dir, "cache-"));
  userCache = mkdtempSync(join(dir, "user-"));
});

describe("the kept parse", () => {
  it("is written after a successful tools list, holds the build and the arguments, and gives the same output", () => {
    const first = yiem(["tools", "list"]);
    expect(first.code, first.stderr).toBe(0);
    expect(entries()).toHaveLength(1);
    const [head, key, body] = readFileSync(entries()[0], "utf8").split("\n");
    expect(head).toBe("yiem-parse-1 -"); // an owned cache: unsigned
    expect(JSON.parse(key)).toEqual([expect.stringMatching(/^[0-9a-f]{64}$/), ["tools", "list"]]);
    expect(JSON.parse(body)).toMatchObject({ _: ["tools", "list"], json: false });
    const second = yiem(["tools", "list"]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(second.stdout).toMatch(/\bgetTime\b/);
  });

  it("is kept for a line whose command word follows a common option (-c SPEC tools list)", () => {
    const args = ["-c", "configs/weather.yaml", "tools", "list"];
    const first = yiem(args);
    expect(first.code, first.stderr).toBe(0);
    expect(entries()).toHaveLength(1);
    const [, key, body] = readFileSync(entries()[0], "utf8").split("\n");
    expect(JSON.parse(key)).toEqual([expect.stringMatching(/^[0-9a-f]{64}$/), args]);
    expect(JSON.parse(body)).toMatchObject({ _: ["tools", "list"], config: "configs/weather.yaml" });
    const second = yiem(args);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe(first.stdout);
  });

  it("is used instead of yargs: a planted entry (json: true) turns the table into JSON", () => {
    expect(yiem(["tools", "list"]).code).toBe(0);
    const [entry] = entries();
    const [head, key] = readFileSync(entry, "utf8").split("\n");
    writeFileSync(entry, `${head}\n${key}\n${JSON.stringify({ _: ["tools", "list"], json: true, debug: false, $0: "yiem" })}\n`);
    const planted = yiem(["tools", "list"]);
    expect(planted.code, planted.stderr).toBe(0);
    expect(JSON.parse(planted.stdout).tools.map((t: { name: string }) => t.name)).toContain("getTime");
  });

  it("an entry of another build, or torn, is ignored and rewritten", () => {
    expect(yiem(["tools", "list"]).code).toBe(0);
    const [entry] = entries();
    const [head, key] = readFileSync(entry, "utf8").split("\n");
    const otherBuild = key.replace(/^\["[0-9a-f]{64}"/, `["${"0".repeat(64)}"`);
    writeFileSync(entry, `${head}\n${otherBuild}\n${JSON.stringify({ _: ["tools", "list"], json: true, $0: "yiem" })}\n`);
    const other = yiem(["tools", "list"]);
    expect(other.code, other.stderr).toBe(0);
    expect(other.stdout).toMatch(/^listTools\t/m); // the table: the entry was not used
    expect(readFileSync(entry, "utf8").split("\n")[1]).toBe(key);
    writeFileSync(entry, readFileSync(entry, "utf8").slice(0, -10));
    const torn = yiem(["tools", "list"]);
    expect(torn.code, torn.stderr).toBe(0);
    expect(torn.stdout).toMatch(/^listTools\t/m);
  });

  it("in a cache inside a project, entries are signed and an unsigned one planted there is ignored", () => {
    const project = mkdtempSync(join(dir, "project-"));
    mkdirSync(join(project, ".git"));
    cacheDir = join(project, "cache");
    expect(yiem(["tools", "list"]).code).toBe(0);
    const [entry] = entries();
    const [head, key] = readFileSync(entry, "utf8").split("\n");
    expect(head).toMatch(/^yiem-parse-1 [0-9a-f]{64}$/);
    writeFileSync(entry, `yiem-parse-1 -\n${key}\n${JSON.stringify({ _: ["tools", "list"], json: true, $0: "yiem" })}\n`);
    const planted = yiem(["tools", "list"]);
    expect(planted.code, planted.stderr).toBe(0);
    expect(planted.stdout).toMatch(/^listTools\t/m);
  });

  it("keeps no usage error, no help, and no run line", () => {
    for (let i = 0; i < 2; i++) {
      const bad = yiem(["tools", "list", "--bogus"]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/unknown flag --bogus/);
    }
    expect(yiem(["tools", "--help"]).code).toBe(0);
    const run = yiem(["run", "--model", "replay:configs/demo.replay.jsonl", "What time is it in Tokyo?"]);
    expect(run.code, run.stderr).toBe(0);
    // A run line after a common option, and a prompt that is a kept command's name.
    const afterOption = yiem(["-c", "configs/weather.yaml", "run", "--model", "replay:configs/demo.replay.jsonl", "tools"]);
    expect(afterOption.code, afterOption.stderr).toBe(0);
    // A run line whose first option's value is a kept command's name.
    const misread = yiem(["--model", "tools", "run", "--dry-run", "a prompt"]);
    expect(misread.code, misread.stderr).toBe(0);
    expect(entries()).toEqual([]);
  });
});
