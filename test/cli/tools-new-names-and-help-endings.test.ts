/**
 * Through the real CLI: `yiem tools new` takes the tool names docs/tools.md
 * documents (hyphens), `yiem tools --help` ends with exit codes, and a usage error in the
 * pretty view prints the error without a "0 turns · 0 tokens" summary.
 */
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

let project: string;
beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), "yiem-small-"));
  await mkdir(join(project, "tools"));
});
afterAll(() => rm(project, { recursive: true, force: true }));

describe("yiem tools new with a hyphenated name", () => {
  it("writes my-tool.ts, which loads and runs under that name", async () => {
    const made = await runCli(["tools", "new", "my-tool", "--description", "Echoes."], { cwd: project });
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toBe("tools/my-tool.ts\n");
    expect(await readdir(join(project, "tools"))).toEqual(["my-tool.ts"]);
    const call = await runCli(["tools", "call", "my-tool", "--args", '{"text":"hi"}', "--events", "none"], { cwd: project });
    expect(call.code, call.stderr).toBe(0);
    expect(call.stdout).toBe('Received arguments: {"text":"hi"}\n');
  });

  it("a name starting with - or _ is still refused (exit 2)", async () => {
    const r = await runCli(["tools", "new", "_x"], { cwd: project });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/invalid tool name "_x": it must start with a letter and have only letters, digits, "_" and "-"/);
  });
});

describe("yiem tools --help", () => {
  it("ends with the exit codes, like every other command", async () => {
    const r = await runCli(["tools", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Exit codes:\n  0 +\S.*\n  1 +\S.*\n  2 +\S.*\n  130 +\S/);
  });
});

describe("a usage error in the pretty view", () => {
  it("prints the error, with no 0-turns summary line", async () => {
    const r = await runCli(["run", "--events", "pretty", "--max-turns", "ten", "-m", "replay:configs/demo.replay.jsonl", "hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('yiem: --max-turns must be an integer >= 1 (got "ten")\n');
    expect(r.stderr).not.toMatch(/0 turns|tokens/);
  });
});
