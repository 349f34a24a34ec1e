/**
 * The CLI as a function finds the spec, keeps sessions and caches by its io (`io.env`: HOME,
 * XDG_STATE_HOME, XDG_CACHE_HOME; `io.cwd`), never by the process's own environment or memory:
 * two in-process calls with different homes in one process use different locations, and the
 * process's own HOME and XDG folders (a decoy here) are never touched; a relative --session or
 * --record file is io.cwd's, not the process's folder's.
 */
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream } from "../support/cli.js";
import { runCliInProcess } from "../support/cli-in-process.js";

const ECHO_TOOL = `export default {
  name: "echo", label: "Echo", description: "Echoes its text.",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  execute: async (_id: string, args: { text?: string }) => ({ content: [{ type: "text", text: "echo " + String(args.text) }] }),
};
`;

let root: string;
let server: ChatServer;
/** Where the calls run: root/x/y/work; the one spec is root/x/agent.config.yaml. */
let work: string;
let tools: string;
/** The process's own HOME and XDG folders during this file: no call may use them. */
let decoy: string;

beforeAll(async () => {
  root = realpathSync(await mkdtemp(join(tmpdir(), "yiem-call-locations-")));
  work = join(root, "x", "y", "work");
  tools = join(root, "tools");
  decoy = join(root, "decoy");
  await mkdir(work, { recursive: true });
  await mkdir(tools);
  await mkdir(decoy);
  await writeFile(join(tools, "echo.ts"), ECHO_TOOL);
  await writeFile(join(root, "x", "agent.config.yaml"), ["model:", "  name: test-model", "  baseURL: ${TEST_BASE_URL}", "  apiKeyEnv: TEST_API_KEY", "  maxRetries: 0", ""].join("\n"));
  // The process's environment points elsewhere (test/support/setup-file.ts puts it back).
  process.env.HOME = decoy;
  process.env.XDG_STATE_HOME = join(decoy, "state");
  process.env.XDG_CACHE_HOME = join(decoy, "cache");
  delete process.env.YIEM_CACHE_DIR;
  delete process.env.YIEM_SESSION_DIR;
  server = await startChatServer(() => reply.json({ content: "answered" }));
});
afterAll(async () => {
  await server?.close();
  await rm(root, { recursive: true, force: true });
});

/** `yiem run --save` in `work` with `env` as io.env only (the process's own is left as it is). */
async function runAs(env: Record<string, string | undefined>, flags: string[] = [], toolDir = tools) {
  const r = await runCliInProcess(["run", "--tool-dir", toolDir, "--save", ...flags, "hi"], {
    cwd: work,
    ioOnly: true,
    env: { TEST_BASE_URL: server.url, TEST_API_KEY: "sk-call-locations", XDG_STATE_HOME: undefined, XDG_CACHE_HOME: undefined, YIEM_CACHE_DIR: undefined, YIEM_SESSION_DIR: undefined, ...env },
  });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe("answered\n");
  assertEventStream(r.events);
  return r;
}

const sessionFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(".json")) : []);

describe("the spec, session and cache locations of a CLI call are its io's", () => {
  it("two calls with different HOME and XDG folders in io.env use different locations; the process's are untouched", async () => {
    // A: home is root/x/y, so the search stops there and never reaches root/x's spec.
    const homeA = join(root, "x", "y");
    // A cache in the call's folder is a signed one: its key is made in the user cache folder of the call's env.
    const cache = { YIEM_CACHE_DIR: ".yiem-cache" };
    const a = await runAs({ HOME: homeA, XDG_STATE_HOME: join(root, "state-a"), XDG_CACHE_HOME: join(root, "cache-a"), ...cache }, ["--model", "test-model", "--base-url", server.url, "--api-key-env", "TEST_API_KEY"]);
    expect(a.events[0]).toMatchObject({ type: "agentStart", configPath: null, tools: expect.arrayContaining(["echo"]) });
    expect(sessionFiles(join(root, "state-a", "yiem", "sessions"))).toHaveLength(1);
    expect(existsSync(join(root, "cache-a", "yiem", "key"))).toBe(true);

    // B: home is root (the spec above the call's folder is found) and no XDG folders: the defaults under that home.
    const b = await runAs({ HOME: root, ...cache });
    expect(b.events[0]).toMatchObject({ type: "agentStart", configPath: join(root, "x", "agent.config.yaml"), tools: expect.arrayContaining(["echo"]) });
    expect(sessionFiles(join(root, ".local", "state", "yiem", "sessions"))).toHaveLength(1);
    expect(existsSync(join(root, ".cache", "yiem", "key"))).toBe(true);
    expect(sessionFiles(join(root, "state-a", "yiem", "sessions"))).toHaveLength(1);

    expect(readdirSync(decoy)).toEqual([]);
  });

  it("a relative --session FILE and --record FILE are io.cwd's: checked, read and written there, not in the process's folder", async () => {
    const processFolder = join(root, "process-folder");
    await mkdir(processFolder);
    const savedCwd = process.cwd();
    process.chdir(processFolder);
    onTestFinished(() => process.chdir(savedCwd));
    const env = { HOME: join(root, "x", "y"), XDG_STATE_HOME: undefined, XDG_CACHE_HOME: undefined, YIEM_CACHE_DIR: undefined, YIEM_SESSION_DIR: undefined, TEST_API_KEY: "sk-call-locations" };
    const args = ["run", "--model", "test-model", "--base-url", server.url, "--api-key-env", "TEST_API_KEY", "--session", "chat.json", "--record", "turns.jsonl"];
    const first = await runCliInProcess([...args, "hi"], { cwd: work, ioOnly: true, env });
    expect(first.code, first.stderr).toBe(0);
    const second = await runCliInProcess([...args, "again"], { cwd: work, ioOnly: true, env });
    expect(second.code, second.stderr).toBe(0);
    const saved = JSON.parse(readFileSync(join(work, "chat.json"), "utf8")) as { messages: Array<{ content: string }> };
    expect(saved.messages.map((m) => m.content)).toEqual(["hi", "answered", "again", "answered"]);
    expect(readFileSync(join(work, "turns.jsonl"), "utf8").trim().split("\n")).toHaveLength(1);
    expect(readdirSync(processFolder)).toEqual([]);
    // The check before the run goes by io.cwd too: a folder missing there, named as given.
    const missing = await runCliInProcess([...args.slice(0, -2), "--record", "runs/turns.jsonl", "hi"], { cwd: work, ioOnly: true, env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`record file runs/turns.jsonl: its folder ${join(work, "runs")} does not exist`);
    await mkdir(join(processFolder, "runs"));
    expect((await runCliInProcess([...args.slice(0, -2), "--record", "runs/turns.jsonl", "hi"], { cwd: work, ioOnly: true, env })).code).toBe(2);
  });

  it("a relative YIEM_CACHE_DIR in io.env is taken from io.cwd: the tool's transformed code is cached there", async () => {
    // A tool file of its own: a module is evaluated once per process, so the file above is not transformed again.
    const toolsC = join(root, "tools-c");
    await mkdir(toolsC);
    await writeFile(join(toolsC, "echo.ts"), ECHO_TOOL);
    await runAs({ HOME: join(root, "x", "y"), YIEM_CACHE_DIR: "cache-c" }, ["--model", "test-model", "--base-url", server.url, "--api-key-env", "TEST_API_KEY"], toolsC);
    const modules = join(work, "cache-c", "modules");
    expect(existsSync(modules) ? readdirSync(modules).filter((name) => name.endsWith(".pack")) : []).toHaveLength(1);
    expect(readdirSync(decoy)).toEqual([]);
  });
});
