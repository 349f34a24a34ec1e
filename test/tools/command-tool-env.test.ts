/**
 * A command tool's `env` is interpolated by the spec's one rule (src/interpolate.ts): an unset
 * `${VAR}` is an error naming it, found when the tool loads; a lone `${VAR}` unset is left out.
 * The variables come from the env the tool is loaded with (the CLI's io.env), which is also the
 * child's parent environment and holds its kill grace period.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadCommandTool } from "../../src/tools/command-tool.js";
import { interpolateEnvMap, InterpolationError } from "../../src/interpolate.js";
import { killGraceMs } from "../../src/tools/process.js";

const dir = mkdtempSync(join(tmpdir(), "yiem-env-"));
function manifest(name: string, env: Record<string, string>): string {
  const file = join(dir, `${name}.tool.json`);
  writeFileSync(file, JSON.stringify({ name, label: name, description: name, inputSchema: { type: "object" }, command: [process.execPath, "-e", "0"], env }));
  return file;
}

describe("command tool env interpolation", () => {
  it("an unset ${VAR} inside a value is a load error naming the key and the variable", async () => {
    delete process.env.YIEM_SURELY_UNSET;
    await expect(loadCommandTool(manifest("inside", { GREETING: "hi ${YIEM_SURELY_UNSET}" }))).rejects.toThrow(
      /"env\.GREETING": environment variable YIEM_SURELY_UNSET is not set \(use \$\{YIEM_SURELY_UNSET:-default\} for a default\)/,
    );
  });

  it("a bad placeholder is a load error too, as in a spec", async () => {
    await expect(loadCommandTool(manifest("bad", { X: "${1X}" }))).rejects.toThrow(/"env\.X": bad placeholder "\$\{1X\}"/);
  });

  it("with an env given, the manifest's ${VAR} and the child's environment come from it, not from the process's", async () => {
    process.env.YIEM_TEST_PROCESS_ONLY = "process";
    delete process.env.YIEM_TEST_GIVEN_ONLY;
    const file = join(dir, "given.tool.json");
    const print = "console.log([process.env.GREETING, process.env.YIEM_TEST_GIVEN_ONLY, process.env.YIEM_TEST_PROCESS_ONLY ?? 'unset'].join(' '))";
    writeFileSync(file, JSON.stringify({ name: "given", label: "given", description: "given", inputSchema: { type: "object" }, command: [process.execPath, "-e", print], env: { GREETING: "hi ${YIEM_TEST_GIVEN_ONLY}" } }));
    const given = { PATH: process.env.PATH, YIEM_TEST_GIVEN_ONLY: "given" };
    const tool = await loadCommandTool(file, given);
    const result = await tool.execute("c1", {}, new AbortController().signal, () => {});
    expect(result.content).toEqual([{ type: "text", text: "hi given given unset" }]);
    await expect(loadCommandTool(file)).rejects.toThrow(/environment variable YIEM_TEST_GIVEN_ONLY is not set/);
  });

  it("the kill grace period is the given env's YIEM_KILL_GRACE_MS (a number ≥ 0), else 2000 ms", () => {
    process.env.YIEM_KILL_GRACE_MS = "7";
    expect(killGraceMs({ YIEM_KILL_GRACE_MS: "150" })).toBe(150);
    expect(killGraceMs({ YIEM_KILL_GRACE_MS: "0" })).toBe(0);
    expect(killGraceMs({})).toBe(2000);
    expect(killGraceMs({ YIEM_KILL_GRACE_MS: "" })).toBe(2000);
    expect(killGraceMs({ YIEM_KILL_GRACE_MS: "-1" })).toBe(2000);
    expect(killGraceMs({ YIEM_KILL_GRACE_MS: "soon" })).toBe(2000);
    expect(killGraceMs()).toBe(7);
  });

  it("a lone unset ${VAR} is left out; $${ is a literal; defaults apply", () => {
    expect(interpolateEnvMap({ PASS: "${YIEM_SURELY_UNSET}", LIT: "$${HOME}", DEF: "${YIEM_SURELY_UNSET:-d}" }, {})).toEqual({ LIT: "${HOME}", DEF: "d" });
    expect(() => interpolateEnvMap({ A: "x${YIEM_SURELY_UNSET}" }, {})).toThrow(InterpolationError);
  });
});
