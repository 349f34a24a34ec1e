/**
 * The session store through the real binary (docs/sessions.md): --save, --continue, --resume,
 * --fork, --session-id, --no-save, each flag error, the ids in events and in --output json, the
 * file rules (0600 in a 0700 folder, format version, broken files left untouched), and the
 * `yiem sessions` commands.
 */
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, type CliResult } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

let dir: string;
let store: string;
let server: ChatServer;
let counter = 0;

const SPEC = ["name: sessions", "systemPrompt: You are terse.", "model:", "  name: test-model", "  baseURL: ${TEST_BASE_URL}", "  apiKeyEnv: TEST_API_KEY", "  maxRetries: 0", ""].join("\n");

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-cli-sessions-"));
  for (const name of ["project", "other"]) {
    await mkdir(join(dir, name), { recursive: true });
    await writeFile(join(dir, name, "agent.config.yaml"), SPEC);
  }
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  store = join(dir, `store-${++counter}`);
  // Each answer names the prompt it answers, so a test can tell the turns apart.
  server = await startChatServer((request) => reply.json({ content: `answer to ${String(request.body.messages.at(-1).content)}` }));
});
afterEach(async () => {
  await server.close();
});

const project = (name = "project") => join(dir, name);
const run = (args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) =>
  runCli(["run", ...args], { cwd: options.cwd ?? project(), env: { TEST_BASE_URL: server.url, TEST_API_KEY: "sk-test", YIEM_SESSION_DIR: store, ...options.env } });
const sessions = (args: string[], env: Record<string, string> = {}) => runCli(["sessions", ...args], { cwd: project(), env: { YIEM_SESSION_DIR: store, ...env } });
const json = (r: CliResult) => JSON.parse(r.stdout) as Record<string, any>;
const sentContents = (n: number) => server.requests[n].messages.map((m: { content: string }) => m.content);
const readSession = async (id: string) => JSON.parse(await readFile(join(store, `${id}.json`), "utf8"));

describe("saving and continuing", () => {
  it("--save stores a new session (0600 in a 0700 folder); --continue continues it; the id is in agentStart, agentEnd and the JSON result", async () => {
    const first = await run(["--save", "--output", "json", "My name is Ada."]);
    expect(first.code).toBe(0);
    assertEventStream(first.events);
    const id = json(first).sessionId as string;
    expect(id).toMatch(/^\d{8}-\d{6}-[0-9a-f]{6}$/);
    expect(first.events[0]).toMatchObject({ type: "agentStart", sessionId: id });
    expect(first.events.at(-1)).toMatchObject({ type: "agentEnd", sessionId: id });
    expect((await stat(store)).mode & 0o777).toBe(0o700);
    expect((await stat(join(store, `${id}.json`))).mode & 0o777).toBe(0o600);

    const second = await run(["--continue", "--output", "json", "What is my name?"]);
    expect(second.code).toBe(0);
    assertEventStream(second.events);
    expect(json(second)).toMatchObject({ sessionId: id, text: "answer to What is my name?" });
    expect(sentContents(1)).toEqual(["You are terse.", "My name is Ada.", "answer to My name is Ada.", "What is my name?"]);

    const file = await readSession(id);
    expect(file).toMatchObject({ format: "yiem-session", version: 1, id, revision: 2, spec: join(project(), "agent.config.yaml"), folder: project(), forkedFrom: null });
    expect(file.runs).toHaveLength(2);
    expect(file.runs[1]).toMatchObject({ runId: second.events[0].runId, model: "test-model", baseURL: server.url, stopReason: "completed", turns: 1 });
    expect(file.runs.flatMap((r: { messages: Array<{ role: string }> }) => r.messages.map((m) => m.role))).toEqual(["user", "assistant", "user", "assistant"]);
  });

  it("--output json has sessionId null for a run that stores nothing, and a run without --save writes no store", async () => {
    const r = await run(["--output", "json", "hi"]);
    expect(r.code).toBe(0);
    expect(json(r).sessionId).toBeNull();
    expect(r.events[0]).not.toHaveProperty("sessionId");
    await expect(readdir(store)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("the spec's sessions.save saves every run; --no-save opts one out", async () => {
    const cwd = join(dir, "saving");
    await mkdir(cwd, { recursive: true });
    await writeFile(join(cwd, "agent.config.yaml"), `${SPEC}sessions: { save: true }\n`);
    const saved = await run(["--output", "json", "one"], { cwd });
    expect(typeof json(saved).sessionId).toBe("string");
    const skipped = await run(["--no-save", "--output", "json", "two"], { cwd });
    expect(json(skipped).sessionId).toBeNull();
    expect((await readdir(store)).filter((f) => f.endsWith(".json"))).toHaveLength(1);
  });

  it("--continue picks the latest updatedAt of this spec in this folder, read from inside the files", async () => {
    const a = json(await run(["--save", "--output", "json", "first"])).sessionId;
    const b = json(await run(["--save", "--output", "json", "second"])).sessionId;
    const elsewhere = json(await run(["--save", "--output", "json", "elsewhere"], { cwd: project("other") })).sessionId;
    // Make `a` the latest by the time inside its file, whatever the file times say.
    const fileA = await readSession(a);
    fileA.updatedAt = new Date(Date.now() + 60_000).toISOString();
    await writeFile(join(store, `${a}.json`), JSON.stringify(fileA));
    const r = await run(["--continue", "--output", "json", "again"]);
    expect(json(r).sessionId).toBe(a);
    expect(json(await run(["--continue", "--output", "json", "there"], { cwd: project("other") })).sessionId).toBe(elsewhere);
    expect((await readSession(b)).runs).toHaveLength(1);
  });

  it("--resume takes a full id or a unique prefix", async () => {
    await run(["--session-id", "pr-123", "first"]);
    await run(["--session-id", "nightly", "other"]);
    const full = await run(["--resume", "pr-123", "--output", "json", "two"]);
    expect(json(full)).toMatchObject({ sessionId: "pr-123", exitCode: 0 });
    const prefix = await run(["--resume", "pr", "--output", "json", "three"]);
    expect(json(prefix)).toMatchObject({ sessionId: "pr-123", exitCode: 0 });
    expect((await readSession("pr-123")).runs.map((r: { messages: Array<{ content: string }> }) => r.messages[0].content)).toEqual(["first", "two", "three"]);
  });

  it("--fork saves into a new session and leaves the old one unchanged; --session-id names the fork", async () => {
    await run(["--session-id", "base", "start"]);
    const before = await readFile(join(store, "base.json"), "utf8");
    const fork = await run(["--resume", "base", "--fork", "--session-id", "base-b", "--output", "json", "branch"]);
    expect(fork.code).toBe(0);
    expect(json(fork).sessionId).toBe("base-b");
    expect(fork.events[0]).toMatchObject({ sessionId: "base-b" });
    expect(await readFile(join(store, "base.json"), "utf8")).toBe(before);
    const forked = await readSession("base-b");
    expect(forked).toMatchObject({ forkedFrom: { id: "base", revision: 1 }, revision: 1 });
    expect(forked.runs.map((r: { messages: Array<{ content: string }> }) => r.messages[0].content)).toEqual(["start", "branch"]);
    const generated = json(await run(["--continue", "--fork", "--output", "json", "again"])).sessionId;
    expect(generated).not.toBe("base-b");
    expect(generated).toMatch(/^\d{8}-/);
  });

  it("--continue --no-save and --dry-run read the session and change nothing", async () => {
    await run(["--session-id", "keep", "start"]);
    const before = await readFile(join(store, "keep.json"), "utf8");
    const r = await run(["--continue", "--no-save", "--output", "json", "peek"]);
    expect(json(r)).toMatchObject({ sessionId: "keep", exitCode: 0 });
    expect(sentContents(1)).toEqual(["You are terse.", "start", "answer to start", "peek"]);
    const dry = await run(["--resume", "keep", "--dry-run", "look"]);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout).request.messages.map((m: { content: string }) => m.content)).toEqual(["You are terse.", "start", "answer to start", "look"]);
    expect(await readFile(join(store, "keep.json"), "utf8")).toBe(before);
  });

  it("a resumed run sends the current spec's system prompt, not an old one", async () => {
    await run(["--session-id", "sys", "start"]);
    await run(["--resume", "sys", "--system", "You are verbose.", "next"]);
    expect(sentContents(1)[0]).toBe("You are verbose.");
    expect((await readSession("sys")).runs.flatMap((r: { messages: Array<{ role: string }> }) => r.messages).some((m: { role: string }) => m.role === "system")).toBe(false);
  });
});

describe("flag errors (exit 2, no model call, nothing written)", () => {
  const cases: Array<[string, string[], RegExp]> = [
    ["--continue with nothing to continue", ["--continue", "x"], /--continue: no session to continue for spec .*agent\.config\.yaml in folder .*; none is stored yet/],
    ["--resume of a missing id", ["--resume", "nope", "x"], /--resume nope: no such session in .*; none is stored yet/],
    ["--fork alone", ["--fork", "x"], /--fork starts a new session from an old one: add --continue or --resume ID/],
    ["--continue with --resume", ["--continue", "--resume", "a", "x"], /--continue and --resume both pick/],
    ["--session-id with --resume, no --fork", ["--resume", "a", "--session-id", "b", "x"], /--session-id names a new session/],
    ["a disallowed --session-id", ["--session-id", "../etc/passwd", "x"], /--session-id: "\.\.\/etc\/passwd" is not a valid session id/],
    ["--session FILE with --continue", ["--session", "chat.json", "--continue", "x"], /--session FILE keeps its own file and cannot be combined with --continue/],
    ["--no-save with --fork", ["--continue", "--fork", "--no-save", "x"], /--no-save cannot be combined with --fork/],
  ];
  it.each(cases)("%s", async (_name, args, message) => {
    const r = await run([...args, "--output", "json"]);
    expect(r.code).toBe(2);
    assertEventStream(r.events, { requireStart: false });
    expect(String(r.events.at(-1)!.error)).toMatch(message);
    expect(json(r)).toMatchObject({ exitCode: 2, error: expect.stringMatching(message) });
    expect(server.requests).toHaveLength(0);
  });

  it("--continue in a folder with other sessions only: exit 2 naming them, never a fresh start", async () => {
    await run(["--save", "elsewhere"], { cwd: project("other") });
    const r = await run(["--continue", "x"]);
    expect(r.code).toBe(2);
    expect(String(r.events.at(-1)!.error)).toMatch(/no session to continue .* 1 other session\(s\) are stored \(yiem sessions list; --resume ID continues one\)/);
    expect(server.requests).toHaveLength(1);
    expect((await readdir(store)).filter((f) => f.endsWith(".json"))).toHaveLength(1);
  });

  it("--resume of a missing id lists the nearest ids", async () => {
    for (const id of ["pr-123", "pr-124", "nightly"]) await run(["--session-id", id, "x"]);
    const r = await run(["--resume", "pr-125", "x"]);
    expect(r.code).toBe(2);
    expect(String(r.events.at(-1)!.error)).toMatch(/--resume pr-125: no such session in .*; nearest: pr-123, pr-124, nightly/);
  });

  it("an ambiguous --resume prefix names the matches", async () => {
    for (const id of ["pr-1", "pr-2"]) await run(["--session-id", id, "x"]);
    const r = await run(["--resume", "pr", "x"]);
    expect(r.code).toBe(2);
    expect(String(r.events.at(-1)!.error)).toContain("--resume pr: several sessions start with it (pr-1, pr-2): give more of the id");
  });

  it("--session-id of an existing session: exit 2, pointing at --resume", async () => {
    await run(["--session-id", "pr-7", "x"]);
    const before = await readFile(join(store, "pr-7.json"), "utf8");
    const r = await run(["--session-id", "pr-7", "y"]);
    expect(r.code).toBe(2);
    expect(String(r.events.at(-1)!.error)).toContain("session pr-7 exists already: --resume pr-7 continues it");
    expect(await readFile(join(store, "pr-7.json"), "utf8")).toBe(before);
  });

  it("a store folder writable by others is refused", async () => {
    await mkdir(store, { recursive: true });
    await chmod(store, 0o777);
    const r = await run(["--save", "x"]);
    expect(r.code).toBe(2);
    expect(String(r.events.at(-1)!.error)).toContain(`the session folder ${store} is writable by other users (mode 777)`);
    // Reading from it is refused too (another user could have placed the conversation).
    await chmod(store, 0o700);
    await run(["--session-id", "placed", "x"]);
    await chmod(store, 0o777);
    const read = await run(["--resume", "placed", "--no-save", "y"]);
    expect(read.code).toBe(2);
    expect(String(read.events.at(-1)!.error)).toContain("is writable by other users");
    expect(server.requests).toHaveLength(1);
    // So is every `yiem sessions` command: nothing is listed, shown or removed from it.
    for (const args of [["list"], ["list", "--json"], ["show", "placed"], ["rm", "placed"], ["prune", "--older-than", "1ms"]]) {
      const r = await sessions(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stdout, args.join(" ")).toBe("");
      expect(r.stderr, args.join(" ")).toBe(`yiem: the session folder ${store} is writable by other users (mode 777): run chmod 700 on it, or set YIEM_SESSION_DIR\n`);
    }
    expect(await readdir(store)).toContain("placed.json");
    await chmod(store, 0o700);
  });
});

describe("broken session files: exit 2 naming the file and the problem, the file left as it was", () => {
  const valid = (extra: Record<string, unknown> = {}) => ({
    format: "yiem-session", version: 1, id: "bad", revision: 1, createdAt: "2026-01-01T00:00:00.000Z", updatedAt: "2026-01-01T00:00:00.000Z",
    spec: null, folder: "/nowhere", forkedFrom: null,
    runs: [{ runId: "r1", savedAt: "2026-01-01T00:00:00.000Z", model: "m", baseURL: null, spec: null, folder: "/nowhere", stopReason: "completed", turns: 1, messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello", toolCalls: [] }] }],
    ...extra,
  });
  const broken: Array<[string, string, RegExp]> = [
    ["a newer format version", JSON.stringify(valid({ version: 2 })), /written by a newer yiem \(format version 2; this yiem reads version 1\): upgrade yiem/],
    ["a truncated file", JSON.stringify(valid()).slice(0, 60), /not valid JSON \(truncated or hand-edited\?\)/],
    ["a system message", JSON.stringify(valid({ runs: [{ ...valid().runs[0], messages: [{ role: "system", content: "obey" }] }] })), /runs\[0\]\.messages\[0\]: a "system" message is not allowed here/],
    ["an unknown role", JSON.stringify(valid({ runs: [{ ...valid().runs[0], messages: [{ role: "developer", content: "x" }] }] })), /"role" must be user, assistant or tool \(got "developer"\)/],
    ["a tool result for a call never made", JSON.stringify(valid({ runs: [{ ...valid().runs[0], messages: [{ role: "user", content: "x" }, { role: "tool", toolCallId: "c9", toolName: "getTime", content: [{ type: "text", text: "12:00" }], isError: false }] }] })), /a result for tool call "c9", which no earlier assistant message made/],
    ["an id that is not its file name", JSON.stringify(valid({ id: "other" })), /it holds session "other", not "bad" as its file name says/],
  ];
  it.each(broken)("%s", async (_name, text, problem) => {
    await mkdir(store, { recursive: true, mode: 0o700 });
    const file = join(store, "bad.json");
    await writeFile(file, text);
    const r = await run(["--resume", "bad", "--output", "json", "x"]);
    expect(r.code).toBe(2);
    const error = String(r.events.at(-1)!.error);
    expect(error).toContain(`session file ${file}: `);
    expect(error).toMatch(problem);
    expect(error).toContain("the file was left as it is");
    expect(json(r).sessionId).toBe("bad");
    expect(await readFile(file, "utf8")).toBe(text);
    expect(await readdir(store)).toEqual(["bad.json"]);
    expect(server.requests).toHaveLength(0);
    const show = await sessions(["show", "bad"]);
    expect(show.code).toBe(2);
    expect(show.stderr).toMatch(problem);
  });

  it("--continue with an unreadable file in the store names it instead of guessing", async () => {
    await run(["--save", "x"]);
    await writeFile(join(store, "junk.json"), "{\"format\": \"yiem-sess");
    const r = await run(["--continue", "y"]);
    expect(r.code).toBe(2);
    expect(String(r.events.at(-1)!.error)).toMatch(/session file .*junk\.json: not valid JSON .*--continue cannot tell whether it is the latest session here/);
  });

  it("--continue skips a newer-version file of another folder, and refuses one that is the latest here", async () => {
    await run(["--session-id", "mine", "x"]);
    await mkdir(store, { recursive: true });
    await writeFile(join(store, "bad.json"), JSON.stringify(valid({ version: 2 })));
    expect(json(await run(["--continue", "--output", "json", "y"])).sessionId).toBe("mine");
    await writeFile(join(store, "bad.json"), JSON.stringify(valid({ version: 2, folder: project(), spec: join(project(), "agent.config.yaml"), updatedAt: new Date(Date.now() + 60_000).toISOString() })));
    const r = await run(["--continue", "z"]);
    expect(r.code).toBe(2);
    expect(String(r.events.at(-1)!.error)).toMatch(/bad\.json: written by a newer yiem/);
  });
});

describe("yiem sessions", () => {
  it("list shows id, update, runs, turns, spec, folder and the first prompt; --json gives {dir, sessions, problems}", async () => {
    await run(["--session-id", "alpha", "The very first prompt of alpha"]);
    await run(["--resume", "alpha", "second"]);
    await run(["--session-id", "beta", `long ${"x".repeat(200)}`]);
    await mkdir(store, { recursive: true });
    await writeFile(join(store, "gamma.json"), "not json");
    const text = await sessions(["list"]);
    expect(text.code).toBe(0);
    const lines = text.stdout.trim().split("\n").map((line) => line.split("\t"));
    expect(lines.map((l) => l[0])).toEqual(["beta", "alpha"]);
    expect(lines[1]).toEqual(["alpha", expect.stringMatching(/^\d{4}-/), "2", "2", join(project(), "agent.config.yaml"), project(), "The very first prompt of alpha"]);
    expect(lines[0][6]).toHaveLength(80);
    expect(text.stderr).toMatch(/warning: session file .*gamma\.json: not valid JSON/);
    const out = JSON.parse((await sessions(["list", "--json"])).stdout);
    expect(out.dir).toBe(store);
    expect(out.sessions.map((s: { id: string }) => s.id)).toEqual(["beta", "alpha"]);
    expect(out.sessions[1]).toMatchObject({ runs: 2, turns: 2, messages: 4, firstPrompt: "The very first prompt of alpha", forkedFrom: null });
    expect(out.problems).toEqual([{ file: join(store, "gamma.json"), problem: expect.stringContaining("not valid JSON") }]);
  });

  it("show prints the session file as JSON when piped; a prefix works; a miss is exit 2 with the nearest", async () => {
    await run(["--session-id", "alpha", "hello"]);
    const r = await sessions(["show", "alp"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(await readSession("alpha"));
    const miss = await sessions(["show", "alpah"]);
    expect(miss.code).toBe(2);
    expect(miss.stderr).toContain("nearest: alpha");
  });

  it("rm removes full ids; a missing id removes nothing (exit 2)", async () => {
    for (const id of ["a1", "a2", "a3"]) await run(["--session-id", id, "x"]);
    const miss = await sessions(["rm", "a1", "a9"]);
    expect(miss.code).toBe(2);
    expect(miss.stderr).toContain("sessions rm a9: no such session");
    expect((await readdir(store)).filter((f) => f.endsWith(".json")).sort()).toEqual(["a1.json", "a2.json", "a3.json"]);
    const r = await sessions(["rm", "a1", "a2"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("a1\na2\n");
    expect((await readdir(store)).filter((f) => f.endsWith(".json"))).toEqual(["a3.json"]);
  });

  it("prune --older-than removes sessions by the updatedAt inside them; a bad age is exit 2", async () => {
    for (const id of ["old", "new"]) await run(["--session-id", id, "x"]);
    const old = await readSession("old");
    old.updatedAt = new Date(Date.now() - 40 * 86_400_000).toISOString();
    await writeFile(join(store, "old.json"), JSON.stringify(old));
    const dry = await sessions(["prune", "--older-than", "30d", "--dry-run"]);
    expect(dry.stdout).toBe("old\n");
    expect((await readdir(store)).filter((f) => f.endsWith(".json")).sort()).toEqual(["new.json", "old.json"]);
    const r = await sessions(["prune", "--older-than", "30d"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("old\n");
    expect((await readdir(store)).filter((f) => f.endsWith(".json"))).toEqual(["new.json"]);
    const bad = await sessions(["prune", "--older-than", "a month"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--older-than "a month" is not an age');
  });
});

describe("what a resumed run sends", () => {
  const SHOUT = `import { defineTool, toolResult } from "yiem";
export default defineTool({
  name: "shout",
  label: "Shout",
  description: "Upper-cases a text",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  async execute(_id, args) { return toolResult(String(args.text).toUpperCase()); },
});
`;

  it("tool results of a tool that is gone stay as history; reasoning goes back only to the server that sent it", async () => {
    const cwd = join(dir, `tooled-${counter}`);
    await mkdir(join(cwd, "tools"), { recursive: true });
    await writeFile(join(cwd, "tools", "shout.ts"), SHOUT);
    await writeFile(join(cwd, "agent.config.yaml"), `${SPEC}toolDirs: [tools]\n`);
    await server.close();
    server = await startChatServer([
      reply.json({ toolCalls: [{ id: "call_a1", name: "shout", arguments: '{"text":"hi"}' }], extraMessage: { reasoning_content: "I should shout." } }),
      reply.json({ content: "HI it is" }),
      reply.json({ content: "still here" }),
    ]);
    const first = await run(["--session-id", "tooled", "shout hi"], { cwd });
    expect(first.code).toBe(0);
    const stored = (await readSession("tooled")).runs[0].messages;
    expect(stored[1]).toMatchObject({ role: "assistant", reasoning: { reasoning_content: "I should shout.", from: `test-model at ${server.url}` } });
    expect(stored[2]).toMatchObject({ role: "tool", toolCallId: "call_a1", toolName: "shout", content: [{ type: "text", text: "HI" }] });

    // The tool is gone; the same server gets the history with its reasoning back.
    await rm(join(cwd, "tools", "shout.ts"));
    const second = await run(["--resume", "tooled", "and now?"], { cwd });
    expect(second.code).toBe(0);
    const sent = server.requests[2].messages;
    expect(sent.map((m: { role: string }) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"]);
    expect(sent[2]).toMatchObject({ reasoning_content: "I should shout.", tool_calls: [{ id: "call_a1" }] });
    expect(sent[3]).toMatchObject({ role: "tool", tool_call_id: "call_a1", content: "HI" });
    expect((server.requests[2].tools ?? []).map((t: { function: { name: string } }) => t.function.name)).not.toContain("shout");

    // Another server gets the same history without the reasoning; each run records its base URL.
    const other = await startChatServer([reply.json({ content: "elsewhere" })]);
    try {
      const third = await run(["--resume", "tooled", "--base-url", other.url, "there?"], { cwd });
      expect(third.code).toBe(0);
      expect(other.requests[0].messages[2]).not.toHaveProperty("reasoning_content");
      expect((await readSession("tooled")).runs.map((r: { baseURL: string }) => r.baseURL)).toEqual([server.url, server.url, other.url]);
    } finally {
      await other.close();
    }
  });
});
