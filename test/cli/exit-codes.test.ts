/**
 * Every documented exit code (docs/cli.md, "Exit codes") reached once through the CLI, in-process
 * (`main(argv, io)`): the code, and the agentEnd that says why. The compat and reliability
 * matrices check their rows below the CLI; the real binary's codes are test/e2e/exit-codes.test.ts.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply } from "../support/chat-server.js";
import { useExitCodeProject } from "../support/exit-code-project.js";
import { assertEventStream } from "../support/cli.js";
import { runCliInProcess } from "../support/cli-in-process.js";

const project = useExitCodeProject("exit-paths");

describe("exit codes through the CLI", () => {
  it("0: the model answered (completed)", async () => {
    const server = await project.serve([reply.json({ content: "done" })]);
    const r = await runCliInProcess(["run", "go"], { cwd: project.dir, env: project.env(server) });
    expect(r).toMatchObject({ code: 0, stdout: "done\n" });
    assertEventStream(r.events);
    expect(r.events.at(-1)).toMatchObject({ stopReason: "completed" });
  });

  it("1: a runtime failure (the model server fails), stdout empty", async () => {
    const server = await project.serve([reply.error(500, "down")]);
    const r = await runCliInProcess(["run", "go"], { cwd: project.dir, env: project.env(server) });
    expect(r).toMatchObject({ code: 1, stdout: "" });
    assertEventStream(r.events);
    expect(r.events.at(-1)).toMatchObject({ stopReason: "error", error: expect.stringContaining("HTTP 500") });
  });

  it("2: a usage error (unknown flag) is one agentEnd, no model call", async () => {
    const r = await runCliInProcess(["run", "--frobnicate", "go"], { cwd: project.dir });
    expect(r).toMatchObject({ code: 2, stdout: "" });
    assertEventStream(r.events, { requireStart: false });
    expect(r.events).toHaveLength(1);
    expect(r.events[0]).toMatchObject({ type: "agentEnd", stopReason: "error", error: expect.stringContaining("--frobnicate") });
  });

  it("2: a spec error names the file", async () => {
    const r = await runCliInProcess(["config", "-c", join(project.dir, "missing.yaml")], { cwd: project.dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^yiem: .*missing\.yaml/);
  });

  it("3: a limit (maxTurns) stops the run", async () => {
    const server = await project.serve((_req, i) => reply.json({ toolCalls: [{ id: `c${i}`, name: "getTime", arguments: "{}" }] }));
    const r = await runCliInProcess(["run", "--max-turns", "1", "go"], { cwd: project.dir, env: project.env(server) });
    expect(r).toMatchObject({ code: 3, stdout: "" });
    assertEventStream(r.events);
    expect(r.events.at(-1)).toMatchObject({ stopReason: "maxTurns" });
  });

  it.each([
    ["SIGHUP", 129],
    ["SIGINT", 130],
    ["SIGQUIT", 131],
    ["SIGTERM", 143],
  ] as const)("%s while the model thinks: agentEnd aborted, exit %i", async (signal, code) => {
    const server = await project.serve([reply.hang()]);
    const s = server;
    const r = await runCliInProcess(["run", "go"], {
      cwd: project.dir,
      env: project.env(s),
      onSignals: (signals) => {
        const poll = setInterval(() => {
          if (s.requests.length === 1) {
            clearInterval(poll);
            signals.emit(signal, signal);
          }
        }, 10);
      },
    });
    expect(r).toMatchObject({ code, stdout: "" });
    assertEventStream(r.events);
    expect(r.events.at(-1)).toMatchObject({ stopReason: "aborted" });
  });
});
