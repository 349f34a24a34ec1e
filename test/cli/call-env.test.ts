/**
 * The CLI as a function reads the environment of its io, never the process's: with `ioOnly`
 * the process's own environment holds decoys (an OPENAI_API_KEY, OPENAI_BASE_URL, the openai
 * package's other variables, YIEM_KILL_GRACE_MS, a variable of its own) and no call may see
 * them. The model's key and headers are what the scripted server received; the command tool,
 * the command hook and the MCP stdio server report the environment they were started with.
 */
import { existsSync, realpathSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream } from "../support/cli.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { fixture, isAlive, waitGone } from "../support/mcp.js";

/** Prints the variables the test looks at, as JSON (the tool's result). */
const PRINT_ENV = `console.log(JSON.stringify({ call: process.env.CALL_VAR ?? null, decoy: process.env.DECOY_VAR ?? null, greeting: process.env.GREETING ?? null }))`;
/** A hook that writes the same to the file named by its first argument (stdout stays blank: allow). */
const HOOK = `import { writeFileSync } from "node:fs";
writeFileSync(process.argv[2], JSON.stringify({ call: process.env.CALL_VAR ?? null, decoy: process.env.DECOY_VAR ?? null, hook: process.env.YIEM_HOOK ?? null }));
`;
/** A tool that outlives SIGTERM (only the SIGKILL after the kill grace period ends it); its pid goes to the file named by its argument. */
const STUBBORN = `process.on("SIGTERM", () => {}); require("node:fs").writeFileSync(process.argv[1], String(process.pid)); setInterval(() => {}, 1000);`;

let root: string;
let server: ChatServer | undefined;
let decoyLog: string;

beforeAll(async () => {
  root = realpathSync(await mkdtemp(join(tmpdir(), "yiem-call-env-")));
  decoyLog = join(root, "decoy-mcp.log");
  // The process's own environment: decoys only (test/support/setup-file.ts puts it back).
  Object.assign(process.env, {
    OPENAI_API_KEY: "sk-decoy-process-key",
    OPENAI_BASE_URL: "http://127.0.0.1:9/decoy/v1",
    OPENAI_ORG_ID: "org-decoy",
    OPENAI_PROJECT_ID: "proj-decoy",
    OPENAI_CUSTOM_HEADERS: "X-Decoy: from-the-process",
    OPENAI_LOG: "debug",
    YIEM_KILL_GRACE_MS: "60000",
    DECOY_VAR: "from-the-process",
    FIXTURE_LOG: decoyLog,
    FIXTURE_GREETING: "from-the-process",
  });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A project folder with `spec` (YAML lines) and `files` (path → text, `*.sh`/`*.mjs` executable). */
async function project(name: string, spec: string[], files: Record<string, string> = {}): Promise<string> {
  const dir = join(root, name);
  await mkdir(join(dir, "tools"), { recursive: true });
  await writeFile(join(dir, "agent.config.yaml"), [...spec, ""].join("\n"));
  for (const [file, text] of Object.entries(files)) {
    await writeFile(join(dir, file), text);
    if (/\.(sh|mjs)$/.test(file)) await chmod(join(dir, file), 0o755);
  }
  return dir;
}

/**
 * `yiem run` in `dir` with `env` as io.env only. The runner's env starts from the process's
 * (without OPENAI_* and YIEM_*), so the decoy of the process's own is taken out of it.
 */
function runAs(dir: string, env: Record<string, string | undefined>, args: string[] = ["go"]) {
  return runCliInProcess(["run", ...args], { cwd: dir, ioOnly: true, timeoutMs: 30_000, env: { DECOY_VAR: undefined, FIXTURE_LOG: undefined, FIXTURE_GREETING: undefined, ...env } });
}

const toolMessages = (s: ChatServer, request: number) =>
  s.requests[request].messages.filter((m: { role: string }) => m.role === "tool") as Array<{ content: string }>;

describe("a CLI call's model client reads io.env, not the process's environment", () => {
  it("no key in io.env: the placeholder is sent, not the process's OPENAI_API_KEY; headers come from io.env alone", async () => {
    server = await startChatServer(() => reply.json({ content: "answered" }));
    const dir = await project("model", ["model:", "  name: test-model", "  maxRetries: 0"]);
    const r = await runAs(dir, { OPENAI_BASE_URL: server.url, OPENAI_ORG_ID: "org-call", OPENAI_CUSTOM_HEADERS: "X-Call: from-io-env" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("answered\n");
    assertEventStream(r.events);
    expect(server.received).toHaveLength(1);
    const headers = server.received[0].headers;
    expect(headers.authorization).toBe("Bearer no-api-key");
    expect(headers["openai-organization"]).toBe("org-call");
    expect(headers["openai-project"]).toBeUndefined();
    expect(headers["x-call"]).toBe("from-io-env");
    expect(headers["x-decoy"]).toBeUndefined();
    // OPENAI_LOG=debug of the process would have the openai package log each request to the console (a warning event).
    expect(r.events.filter((e) => e.type === "warning")).toEqual([]);
  });

  it("the key of io.env is the one sent", async () => {
    server = await startChatServer(() => reply.json({ content: "answered" }));
    const dir = await project("model-key", ["model:", "  name: test-model", "  maxRetries: 0"]);
    const r = await runAs(dir, { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-call-key" });
    expect(r.code, r.stderr).toBe(0);
    expect(server.received[0].headers.authorization).toBe("Bearer sk-call-key");
  });
});

describe("the children a CLI call starts have io.env as their parent environment", () => {
  it("a command tool (its manifest's ${VAR} too), a command hook and an MCP stdio server", async () => {
    server = await startChatServer([
      reply.json({ toolCalls: [{ id: "c1", name: "printenv", arguments: "{}" }] }),
      reply.json({ content: "done" }),
    ]);
    const hookOut = join(root, "hook-env.json");
    const callLog = join(root, "call-mcp.log");
    const dir = await project("children", [
      "model:", "  name: test-model", "  baseURL: ${TEST_BASE_URL}", "  maxRetries: 0",
      "toolDirs: [tools]",
      "hooks:", `  beforeToolCall: { command: [${JSON.stringify(process.execPath)}, ./hook.mjs, ${JSON.stringify(hookOut)}] }`,
      "mcpServers:", `  fx: ${JSON.stringify(fixture("ok", { required: true }))}`,
    ], {
      "hook.mjs": HOOK,
      "tools/printenv.tool.json": JSON.stringify({
        name: "printenv", label: "printenv", description: "Prints its environment.", inputSchema: { type: "object" },
        command: [process.execPath, "-e", PRINT_ENV], env: { GREETING: "hello ${CALL_VAR}" },
      }),
    });
    const r = await runAs(dir, { TEST_BASE_URL: server.url, CALL_VAR: "from-io-env", FIXTURE_LOG: callLog, FIXTURE_GREETING: "from-io-env" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("done\n");
    assertEventStream(r.events);
    expect(r.events.filter((e) => e.type === "warning")).toEqual([]);
    expect(JSON.parse(toolMessages(server, 1)[0].content)).toEqual({ call: "from-io-env", decoy: null, greeting: "hello from-io-env" });
    expect(JSON.parse(await readFile(hookOut, "utf8"))).toEqual({ call: "from-io-env", decoy: null, hook: "beforeToolCall" });
    expect(await readFile(callLog, "utf8")).toMatch(/^started \d+ ok env:from-io-env$/m);
    expect(existsSync(decoyLog)).toBe(false);
  });

  it("YIEM_KILL_GRACE_MS of io.env ends a timed-out tool that ignores SIGTERM, not the process's (60 s)", async () => {
    server = await startChatServer([
      reply.json({ toolCalls: [{ id: "c1", name: "stubborn", arguments: "{}" }] }),
      reply.json({ content: "gave up" }),
    ]);
    const pidFile = join(root, "stubborn.pid");
    const dir = await project("grace", ["model:", "  name: test-model", "  baseURL: ${TEST_BASE_URL}", "  maxRetries: 0", "toolDirs: [tools]"], {
      "tools/stubborn.tool.json": JSON.stringify({
        name: "stubborn", label: "stubborn", description: "Ignores SIGTERM.", inputSchema: { type: "object" },
        command: [process.execPath, "-e", STUBBORN, pidFile], timeoutMs: 1500,
      }),
    });
    const r = await runAs(dir, { TEST_BASE_URL: server.url, YIEM_KILL_GRACE_MS: "100" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("gave up\n");
    expect(r.events.find((e) => e.type === "toolExecutionEnd")).toMatchObject({ isError: true });
    expect(toolMessages(server, 1)[0].content).toContain("timed out after 1500 ms");
    // SIGTERM at the timeout, SIGKILL 100 ms later; the process's grace would keep it alive for a minute.
    const pid = Number(await readFile(pidFile, "utf8"));
    try {
      expect(await waitGone([pid], 10_000)).toEqual([]);
    } finally {
      if (isAlive(pid)) process.kill(pid, "SIGKILL");
    }
  });
});
