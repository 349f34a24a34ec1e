/**
 * src/grace-ms.ts: YIEM_KILL_GRACE_MS and YIEM_EXIT_GRACE_MS are numbers of milliseconds ≥ 0; the
 * CLI refuses any other value before a command starts, a library caller gets the default.
 */
import { describe, expect, it } from "vitest";
import { graceMs, graceVariableProblem } from "../src/grace-ms.js";
import { killGraceMs } from "../src/tools/process.js";
import { exitGraceMs } from "../src/cli/bounded-exit.js";
import { runCli } from "./support/cli.js";

describe("grace variables", () => {
  it("take milliseconds ≥ 0; unset or empty is the default", () => {
    expect(graceMs({ YIEM_KILL_GRACE_MS: "0" }, "YIEM_KILL_GRACE_MS", 2000)).toBe(0);
    expect(graceMs({ YIEM_KILL_GRACE_MS: "1500.5" }, "YIEM_KILL_GRACE_MS", 2000)).toBe(1500.5);
    expect(graceMs({ YIEM_KILL_GRACE_MS: "2147483647" }, "YIEM_KILL_GRACE_MS", 2000)).toBe(2147483647);
    expect(graceMs({ YIEM_KILL_GRACE_MS: "" }, "YIEM_KILL_GRACE_MS", 2000)).toBe(2000);
    expect(graceMs({}, "YIEM_KILL_GRACE_MS", 2000)).toBe(2000);
    expect(killGraceMs({ YIEM_KILL_GRACE_MS: "250" })).toBe(250);
    expect(exitGraceMs({ YIEM_EXIT_GRACE_MS: "750" })).toBe(750);
    expect(graceVariableProblem({ YIEM_KILL_GRACE_MS: "0", YIEM_EXIT_GRACE_MS: "" })).toBeUndefined();
  });

  it("any other value is a problem that names the variable (a library caller gets the default)", () => {
    for (const bad of ["5s", "-1", "abc", "Infinity", " ", " 5", "0x10", "1e3", "2147483648"]) {
      expect(graceVariableProblem({ YIEM_EXIT_GRACE_MS: bad }), bad).toBe(`YIEM_EXIT_GRACE_MS=${JSON.stringify(bad)} is not a number of milliseconds from 0 to 2147483647 (like 2000; unset it for the default)`);
      expect(killGraceMs({ YIEM_KILL_GRACE_MS: bad })).toBe(2000);
    }
  });

  it("the CLI refuses a bad value before the command runs: exit 2, the variable named on stderr", async () => {
    const bad = await runCli(["tools", "list"], { env: { YIEM_KILL_GRACE_MS: "5s" } });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toContain('YIEM_KILL_GRACE_MS="5s" is not a number of milliseconds from 0 to 2147483647');
    const good = await runCli(["tools", "list"], { env: { YIEM_KILL_GRACE_MS: "500", YIEM_EXIT_GRACE_MS: "0" } });
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toMatch(/\bgetTime\b/);
  });
});
