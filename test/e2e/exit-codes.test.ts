/**
 * The exit codes of the real binary, one spawned run per path (docs/reliability.md, "Exit
 * codes"): what `main` returns is what the process ends with. The same paths are covered in
 * depth in-process (test/cli/); signals to a real pid are in the signal battery.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply } from "../support/chat-server.js";
import { useExitCodeProject } from "../support/exit-code-project.js";
import { assertEventStream, runCli } from "../support/cli.js";

const project = useExitCodeProject("exit-codes");

describe("the real binary's exit code", () => {
  it("0: a completed run", async () => {
    const server = await project.serve([reply.json({ content: "done" })]);
    const r = await runCli(["run", "go"], { cwd: project.dir, env: project.env(server) });
    expect(r).toMatchObject({ code: 0, signal: null, stdout: "done\n" });
    assertEventStream(r.events);
  });

  it("1: the model server fails", async () => {
    const server = await project.serve(() => reply.error(500, "down"));
    const r = await runCli(["run", "go"], { cwd: project.dir, env: project.env(server) });
    expect(r.code).toBe(1);
    assertEventStream(r.events);
    expect(r.events.at(-1)).toMatchObject({ stopReason: "error" });
  });

  it("2: a usage error (unknown flag), one agentEnd on stderr", async () => {
    const r = await runCli(["run", "--frobnicate", "go"], { cwd: project.dir });
    expect(r.code).toBe(2);
    assertEventStream(r.events, { requireStart: false });
    expect(r.events.at(-1)).toMatchObject({ stopReason: "error" });
  });

  it("2: a spec error", async () => {
    const r = await runCli(["config", "-c", join(project.dir, "missing.yaml")], { cwd: project.dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^yiem: /);
  });

  it("3: a limit (maxTurns) stops the run", async () => {
    const server = await project.serve((_req, i) => reply.json({ toolCalls: [{ id: `c${i}`, name: "getTime", arguments: "{}" }] }));
    const r = await runCli(["run", "--max-turns", "1", "go"], { cwd: project.dir, env: project.env(server) });
    expect(r.code).toBe(3);
    expect(r.events.at(-1)).toMatchObject({ stopReason: "maxTurns" });
  });

  it("0 for --help and the help text on stdout", async () => {
    const r = await runCli(["--help"], { cwd: project.dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("yiem <command> [options]");
    expect(r.stderr).toBe("");
  });
});
