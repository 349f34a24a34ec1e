/**
 * MCP around the run: spec errors (exit 2), `--mcp-config` files in the `.mcp.json` shape,
 * `yiem mcp list`, `yiem tools list|call` with MCP tools, and no orphan server process after a
 * run, also for a server started through a wrapper (as npx does) that ignores stdin EOF and SIGTERM.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";
import { fixture, fixtureServer, fixtureWrapper, isAlive, mcpProject, waitGone } from "../support/mcp.js";

let server: ChatServer | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const project = async (spec: Record<string, unknown>) => {
  const dir = await mcpProject(spec);
  dirs.push(dir);
  return dir;
};
const env = (s: ChatServer | undefined, extra: Record<string, string> = {}) => ({ ...(s ? { TEST_BASE_URL: s.url } : {}), TEST_API_KEY: "sk-test-secret-value", ...extra });

/** The message of a run that failed before starting (`--events none`: one line on stderr). */
async function specError(spec: Record<string, unknown>, argv: string[] = [], extraEnv: Record<string, string> = {}) {
  const dir = await project(spec);
  const r = await runCli(["run", "--events", "none", ...argv, "go"], { cwd: dir, env: env(undefined, extraEnv), timeoutMs: 60_000 });
  return { code: r.code, message: r.stderr.trim(), dir };
}

describe("MCP spec errors are exit 2", { timeout: 120_000 }, () => {
  it("a server name that breaks the rule", async () => {
    const r = await specError({ mcpServers: { My_Server: fixture("ok") } });
    expect(r.code).toBe(2);
    expect(r.message).toMatch(/agent\.config\.yaml:\d+: "mcpServers\.My_Server": the name "My_Server" must be lowercase letters, digits and -/);
  });

  it("a command that is not found (before anything starts)", async () => {
    const r = await specError({ mcpServers: { gh: { command: ["no-such-mcp-server-binary", "stdio"] } } });
    expect(r.code).toBe(2);
    expect(r.message).toBe('yiem: mcpServers.gh.command: command "no-such-mcp-server-binary" not found on PATH');
  });

  it("an unset variable in env", async () => {
    const r = await specError({ mcpServers: { gh: fixture("ok", { env: { TOKEN_FOR_GH: "${YIEM_TEST_UNSET_VAR}" } }) } });
    expect(r.code).toBe(2);
    expect(r.message).toContain('"mcpServers.gh.env.TOKEN_FOR_GH": environment variable YIEM_TEST_UNSET_VAR is not set');
  });

  it("both command and url, neither, a command string with spaces, and an unknown key", async () => {
    const both = await specError({ mcpServers: { x: { command: ["node"], url: "http://127.0.0.1:1/mcp" } } });
    expect(both.code).toBe(2);
    expect(both.message).toContain('"mcpServers.x" has both "command" (stdio) and "url" (HTTP)');
    const neither = await specError({ mcpServers: { x: { required: true } } });
    expect(neither.message).toContain('"mcpServers.x" needs "command"');
    const spaced = await specError({ mcpServers: { x: { command: "npx -y some-server" } } });
    expect(spaced.message).toContain("must list the program and its arguments separately");
    const unknown = await specError({ mcpServers: { x: { command: ["node"], timeout: 5 } } });
    expect(unknown.code).toBe(2);
    expect(unknown.message).toContain('unknown key "timeout" in "mcpServers.x"');
  });

  it("an MCP tool with the name of a local tool", async () => {
    const dir = await project({ mcpServers: { fx: fixture("ok") } });
    await mkdir(join(dir, "tools"));
    await writeFile(join(dir, "tools", "clash.ts"), [
      'import { defineTool } from "yiem";',
      'export default defineTool({ name: "mcp__fx__hello", label: "x", description: "x", inputSchema: { type: "object", properties: {} }, execute: () => "local" });',
    ].join("\n"));
    const r = await runCli(["run", "--events", "none", "go"], { cwd: dir, env: env(undefined), timeoutMs: 60_000 });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('its tool "hello" would be offered as "mcp__fx__hello", which is the name of a local tool');
  });
});

describe("--mcp-config", { timeout: 120_000 }, () => {
  it("reads .mcp.json files unchanged (command string + args + env), repeatable, with the spec's servers", async () => {
    server = await startChatServer([reply.json({ content: "ok" })]);
    const dir = await project({ mcpServers: { fromspec: fixture("ok") } });
    await writeFile(join(dir, ".mcp.json"), JSON.stringify({ mcpServers: { one: { type: "stdio", command: process.execPath, args: [fixtureServer, "ok"], env: { FIXTURE_GREETING: "x" } } } }));
    await mkdir(join(dir, "more"));
    await writeFile(join(dir, "more", "mcp.yaml"), `mcpServers:\n  two:\n    command: ["${process.execPath}", "${fixtureServer}", "ok"]\n    required: false\n`);
    const r = await runCli(["run", "--mcp-config", ".mcp.json", "--mcp-config", "more/mcp.yaml", "go"], { cwd: dir, env: env(server), timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    assertEventStream(r.events);
    expect((r.events[0] as Record<string, any>).mcpServers.map((s: { name: string }) => s.name)).toEqual(["fromspec", "one", "two"]);
    const offered = server.requests[0].tools.map((t: { function: { name: string } }) => t.function.name);
    for (const name of ["mcp__fromspec__hello", "mcp__one__hello", "mcp__two__hello"]) expect(offered).toContain(name);
  });

  it("a name defined twice, a missing file and a file of the wrong shape are exit 2", async () => {
    const dir = await project({ mcpServers: { one: fixture("ok") } });
    await writeFile(join(dir, "dup.json"), JSON.stringify({ mcpServers: { one: fixture("ok") } }));
    await writeFile(join(dir, "wrong.json"), JSON.stringify({ servers: {} }));
    const run = (file: string) => runCli(["run", "--events", "none", "--mcp-config", file, "go"], { cwd: dir, env: env(undefined), timeoutMs: 60_000 });
    const dup = await run("dup.json");
    expect(dup.code).toBe(2);
    expect(dup.stderr).toMatch(/MCP server "one" is defined twice/);
    const missing = await run("nope.json");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--mcp-config: nope.json not found");
    const wrong = await run("wrong.json");
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('an MCP config file must hold {"mcpServers": {...}}');
  });
});

describe("yiem mcp list and yiem tools with MCP servers", { timeout: 120_000 }, () => {
  it("mcp list prints each server's status and tools; exit 0 with only an optional server failing", async () => {
    const dir = await project({ mcpServers: { fx: fixture("ok"), flaky: fixture("die", { required: false }) } });
    const r = await runCli(["mcp", "list"], { cwd: dir, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^fx: ready \(stdio, required\) protocol \d{4}-\d{2}-\d{2}, yiem-fixture 1\.0\.0, 6 tools, \d+ ms$/m);
    expect(r.stdout).toMatch(/^  mcp__fx__hello\tSays hello\.$/m);
    expect(r.stdout).toMatch(/^flaky: FAILED \(stdio, optional\) in handshake: the server exited during start \(exit code 2\)$/m);
    expect(r.stdout).toContain("  stderr: fixture: FATAL missing FIXTURE_TOKEN");
  });

  it("mcp list --json, and exit 1 when a required server fails", async () => {
    const dir = await project({ mcpServers: { fx: fixture("ok"), broken: fixture("die") } });
    const r = await runCli(["mcp", "list", "--json"], { cwd: dir, timeoutMs: 60_000 });
    expect(r.code).toBe(1);
    const { servers } = JSON.parse(r.stdout);
    expect(servers[0]).toMatchObject({ name: "fx", status: "ready", transport: "stdio", required: true, serverInfo: { name: "yiem-fixture" } });
    expect(servers[0].tools).toContainEqual({ name: "mcp__fx__weird_name_with_spaces", tool: "weird.name/with spaces", description: "A name that needs sanitising." });
    expect(servers[1]).toMatchObject({ name: "broken", status: "failed", error: { phase: "handshake", stderrTail: expect.stringContaining("FATAL") } });
  });

  it("tools list shows MCP tools with their server; tools call runs one without a model", async () => {
    const dir = await project({ mcpServers: { fx: fixture("ok") } });
    const list = await runCli(["tools", "list"], { cwd: dir, timeoutMs: 60_000 });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split("\n")).toContain("mcp__fx__hello\thello\tmcp:fx\tSays hello.");
    const json = JSON.parse((await runCli(["tools", "list", "--json"], { cwd: dir, timeoutMs: 60_000 })).stdout);
    expect(json.tools.find((t: { name: string }) => t.name === "mcp__fx__hello").source).toEqual({ kind: "mcp", server: "fx" });
    const call = await runCli(["tools", "call", "mcp__fx__hello", "--args", '{"name":"cli"}', "--events", "ndjson"], { cwd: dir, timeoutMs: 60_000 });
    expect(call.code, call.stderr).toBe(0);
    expect(call.stdout).toBe(`hello cli from ${dir}\n`);
    assertEventStream(call.events);
    expect(call.events.map((e) => e.type)).toEqual(["agentStart", "mcpServerReady", "toolExecutionStart", "toolExecutionEnd", "agentEnd"]);
  });

  it("tools list exits 1 when a required server fails, naming it; an optional one is a warning event", async () => {
    const dir = await project({ mcpServers: { broken: fixture("die") } });
    const failed = await runCli(["tools", "list"], { cwd: dir, timeoutMs: 60_000 });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe("");
    expect(failed.stderr).toContain('MCP server "broken" failed (handshake): the server exited during start (exit code 2)');
    const optional = await runCli(["tools", "list", "--no-spec-mcp", "--mcp-config", "opt.json"], { cwd: await (async () => {
      await writeFile(join(dir, "opt.json"), JSON.stringify({ mcpServers: { flaky: fixture("die", { required: false }) } }));
      return dir;
    })(), timeoutMs: 60_000 });
    expect(optional.code, optional.stderr).toBe(0);
    expect(optional.stdout).toContain("listTools\t");
    expect(JSON.parse(optional.stderr.trim().split("\n")[0])).toMatchObject({ type: "mcpServerError", server: "flaky", required: false });
  });
});

describe("mcp serve with a required MCP server that fails", { timeout: 120_000 }, () => {
  it("exit 1: the server's mcpServerError event, then agentEnd naming it (told by its type, not its name)", async () => {
    const dir = await project({ mcpServers: { broken: fixture("die") } });
    const r = await runCli(["mcp", "serve", "--events", "ndjson"], { cwd: dir, timeoutMs: 60_000 });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.events.map((e) => e.type)).toEqual(["mcpServerError", "agentEnd"]);
    expect(r.events[0]).toMatchObject({ server: "broken", phase: "handshake", required: true });
    expect(r.events[1]).toMatchObject({ stopReason: "error", error: expect.stringContaining('MCP server "broken" failed (handshake)') });
  });
});

describe("MCP tools are tools like any other", { timeout: 120_000 }, () => {
  it("a command hook sees the MCP tool's name and may block it: no call starts", async () => {
    server = await startChatServer([
      reply.json({ toolCalls: [{ id: "c1", name: "mcp__fx__hello", arguments: '{"name":"x"}' }] }),
      reply.json({ content: "ok" }),
    ]);
    const dir = await project({});
    const hook = join(dir, "deny-mcp.mjs");
    await writeFile(hook, 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const e=JSON.parse(s);if(e.toolName.startsWith("mcp__")){process.stderr.write("no MCP for "+e.toolName);process.exit(2)}});\n');
    await writeFile(join(dir, "agent.config.yaml"), JSON.stringify({
      model: { name: "test-model", baseURL: "${TEST_BASE_URL}", apiKeyEnv: "TEST_API_KEY", maxRetries: 0 },
      mcpServers: { fx: fixture("ok") },
      hooks: { beforeToolCall: { command: [process.execPath, hook] } },
    }));
    const r = await runCli(["run", "go"], { cwd: dir, env: env(server), timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    assertEventStream(r.events);
    expect(r.events.find((e) => e.type === "toolCallRejected")).toMatchObject({ toolName: "mcp__fx__hello", reason: expect.stringContaining("no MCP for mcp__fx__hello") });
    expect(r.events.some((e) => e.type === "toolExecutionStart")).toBe(false);
  });

  it("yiem config shows the resolved servers with header values hidden", async () => {
    const dir = await project({ mcpServers: { web: { url: "http://127.0.0.1:1/mcp", headers: { Authorization: "Bearer literal-secret-value" }, required: false } } });
    const r = await runCli(["config", "--json"], { cwd: dir, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const view = JSON.parse(r.stdout);
    expect(view.mcpServers).toEqual([expect.objectContaining({ name: "web", transport: "http", required: false, startupTimeoutMs: 30000, toolTimeoutMs: 120000, headers: { Authorization: "***" } })]);
    expect(r.stdout).not.toContain("literal-secret-value");
  });
});

describe("no orphan MCP server processes", { timeout: 120_000 }, () => {
  /** A server behind a wrapper that ignores stdin EOF and SIGTERM: only the group kill ends it. */
  const pidPath = async () => {
    const dir = await mkdtemp(join(tmpdir(), "yiem-mcp-pid-"));
    dirs.push(dir);
    return join(dir, "server.pid");
  };
  const stubborn = (pidFile: string) => ({ command: [process.execPath, fixtureWrapper, "stubborn"], env: { FIXTURE_PID_FILE: pidFile } });

  it("after a completed run", async () => {
    server = await startChatServer([reply.json({ content: "ok" })]);
    const pidFile = await pidPath();
    const dir = await project({ mcpServers: { wrapped: stubborn(pidFile) } });
    const r = await runCli(["run", "go"], { cwd: dir, env: env(server, { YIEM_KILL_GRACE_MS: "300" }), timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const pid = Number(await readFile(pidFile, "utf8"));
    expect(pid).toBeGreaterThan(0);
    expect(await waitGone([pid], 3000)).toEqual([]);
  });

  it("after SIGTERM during the model call (exit 143)", async () => {
    server = await startChatServer([reply.hang()]);
    const pidFile = await pidPath();
    const dir = await project({ mcpServers: { wrapped: stubborn(pidFile) } });
    let sent = false;
    const r = await runCli(["run", "go"], {
      cwd: dir,
      env: env(server, { YIEM_KILL_GRACE_MS: "300" }),
      timeoutMs: 60_000,
      onSpawn: (child) => {
        child.stderr!.on("data", (d: Buffer) => {
          if (!sent && d.toString().includes('"turnStart"')) {
            sent = true;
            setTimeout(() => child.kill("SIGTERM"), 100);
          }
        });
      },
    });
    expect(r.code).toBe(143);
    const pid = Number(await readFile(pidFile, "utf8"));
    expect(isAlive(pid) ? await waitGone([pid], 3000) : []).toEqual([]);
  });

  it("after a required server failed at start (the others are closed too)", async () => {
    const pidFile = await pidPath();
    const dir = await project({ mcpServers: { wrapped: stubborn(pidFile), broken: fixture("die") } });
    const r = await runCli(["run", "go"], { cwd: dir, env: env(undefined, { YIEM_KILL_GRACE_MS: "300" }), timeoutMs: 60_000 });
    expect(r.code).toBe(1);
    const pid = Number(await readFile(pidFile, "utf8"));
    expect(await waitGone([pid], 3000)).toEqual([]);
  });
});
