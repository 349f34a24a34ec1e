/**
 * The openai package's own log lines (OPENAI_LOG), through the real package over real HTTP to
 * the scripted loopback server: each logger call is one line for the request being served (its
 * `onSdkLog`), at the level OPENAI_LOG of the provider's env sets (default `warn`), with the key
 * hidden; nothing ever goes to the global console. Lines are routed to the request being served.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createOpenAIProvider } from "../../src/provider/openai.js";
import { formatSdkLogArgs, SDK_LOG_MAX_CHARS, type SdkLogLine } from "../../src/provider/sdk-log.js";
import type { ModelRequest } from "../../src/provider/types.js";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";

const KEY = "sk-sdk-log-test-key";
let server: ChatServer | undefined;
let consoleCalls: unknown[][];

beforeEach(() => {
  consoleCalls = [];
  for (const name of ["log", "debug", "info", "warn", "error"] as const) {
    vi.spyOn(console, name).mockImplementation((...args: unknown[]) => void consoleCalls.push([name, ...args]));
  }
});
afterEach(async () => {
  vi.restoreAllMocks();
  await server?.close();
  server = undefined;
});

function provider(env: NodeJS.ProcessEnv, stream = true) {
  return createOpenAIProvider({ model: "test-model", baseURL: server!.url, apiKey: KEY, env, maxRetries: 0, stream });
}

/** A request whose log lines are collected in `lines`. */
function request(lines: SdkLogLine[] | undefined, content = "hi"): ModelRequest {
  return {
    messages: [{ role: "user", content }],
    tools: [],
    signal: new AbortController().signal,
    ...(lines ? { onSdkLog: (line: SdkLogLine) => void lines.push(line) } : {}),
  };
}

describe("the openai package's log lines", () => {
  it("OPENAI_LOG=debug: one line per logger call of the package, in order, the key hidden, nothing on the console", async () => {
    server = await startChatServer([reply.stream({ content: "streamed" }), reply.json({ content: "whole" })]);
    const lines: SdkLogLine[] = [];
    const streaming = provider({ OPENAI_LOG: "debug" });
    expect((await streaming.complete(request(lines))).message.content).toBe("streamed");
    // The package logs a request as: debug "sending request" + details, info the status, debug "response start" + details.
    expect(lines.map((l) => l.level)).toEqual(["debug", "info", "debug"]);
    const logId = /^\[(log_\w+)\] sending request \{/.exec(lines[0].message)?.[1];
    expect(logId).toBeDefined();
    expect(lines[1].message).toMatch(new RegExp(`^\\[${logId}\\] post ${server.url}/chat/completions succeeded with status 200 in \\d+ms$`));
    expect(lines[2].message).toMatch(new RegExp(`^\\[${logId}\\] response start \\{ url: '${server.url}/chat/completions', status: 200,`));
    // One line each, however big the object: bytes as their text, the Authorization header masked by the package.
    for (const line of lines) expect(line.message).not.toContain("\n");
    expect(lines[0].message).toContain(`body: '{"model":"test-model","messages":[{"role":"user","content":"hi"}]`);
    expect(lines[0].message).toContain("authorization: '***'");
    expect(JSON.stringify(lines)).not.toContain(KEY);

    const whole = provider({ OPENAI_LOG: "debug" }, false);
    const more: SdkLogLine[] = [];
    expect((await whole.complete(request(more))).message.content).toBe("whole");
    expect(more.map((l) => l.level)).toEqual(["debug", "info", "debug"]);
    expect(consoleCalls).toEqual([]);
    server.assertClean();
  });

  it("OPENAI_LOG=info: only the info lines; a failed request's status line too", async () => {
    server = await startChatServer([reply.json({ content: "ok" }), reply.error(400, "bad request")]);
    const lines: SdkLogLine[] = [];
    const p = provider({ OPENAI_LOG: "info" });
    await p.complete(request(lines));
    await expect(p.complete(request(lines))).rejects.toThrow(/400/);
    expect(lines.map((l) => l.level)).toEqual(["info", "info"]);
    expect(lines[0].message).toMatch(/succeeded with status 200/);
    expect(lines[1].message).toMatch(/failed with status 400/);
    expect(consoleCalls).toEqual([]);
  });

  it("OPENAI_LOG unset (the package's default, warn): no line for a good request, and none for a refused one", async () => {
    server = await startChatServer([reply.json({ content: "ok" }), reply.error(401, "no such key")]);
    const lines: SdkLogLine[] = [];
    const p = provider({});
    await p.complete(request(lines));
    await expect(p.complete(request(lines))).rejects.toThrow(/401/);
    expect(lines).toEqual([]);
    expect(consoleCalls).toEqual([]);
  });

  it("an unknown OPENAI_LOG is one warn line (the level is warn), as the package would say it, not console text", async () => {
    server = await startChatServer([reply.json({ content: "one" }), reply.json({ content: "two" })]);
    const lines: SdkLogLine[] = [];
    const p = provider({ OPENAI_LOG: " loud " });
    await p.complete(request(lines));
    await p.complete(request(lines));
    expect(lines).toEqual([{ level: "warn", message: 'OPENAI_LOG was set to "loud", expected one of ["off","error","warn","info","debug"]; the level is "warn"' }]);
    expect(consoleCalls).toEqual([]);
  });

  it("a request without onSdkLog: its lines are dropped, never printed", async () => {
    server = await startChatServer([reply.json({ content: "ok" })]);
    await provider({ OPENAI_LOG: "debug" }).complete(request(undefined));
    expect(consoleCalls).toEqual([]);
  });

  it("one provider's requests one after another (as a run sends them): each gets exactly its own lines", async () => {
    server = await startChatServer((r) => reply.json({ content: `answer to ${r.body.messages[0].content}` }));
    const p = provider({ OPENAI_LOG: "debug" });
    for (const prompt of ["a", "b"]) {
      const lines: SdkLogLine[] = [];
      expect((await p.complete(request(lines, prompt))).message.content).toBe(`answer to ${prompt}`);
      expect(lines.map((l) => l.level)).toEqual(["debug", "info", "debug"]);
      expect(lines[0].message).toContain(`"content":"${prompt}"`);
      expect(new Set(lines.map((l) => /^\[(log_\w+)\]/.exec(l.message)?.[1])).size).toBe(1);
    }
  });

  it("two requests of one provider in flight at once (a library caller sharing it): every line reaches one of them, none the console", async () => {
    server = await startChatServer(async (r) => {
      await new Promise((done) => setTimeout(done, 30));
      return reply.json({ content: `answer to ${r.body.messages[0].content}` });
    });
    const p = provider({ OPENAI_LOG: "debug" });
    const a: SdkLogLine[] = [];
    const b: SdkLogLine[] = [];
    const [ra, rb] = await Promise.all([p.complete(request(a, "a")), p.complete(request(b, "b"))]);
    expect([ra.message.content, rb.message.content]).toEqual(["answer to a", "answer to b"]);
    expect([...a, ...b].map((l) => l.level).sort()).toEqual(["debug", "debug", "debug", "debug", "info", "info"]);
    expect(consoleCalls).toEqual([]);
  });
});

describe("formatSdkLogArgs", () => {
  it("strings as they are, objects inspected on one line, bytes as text, depth limited", () => {
    const deep = { a: { b: { c: { d: { e: { f: 1 } } } } } };
    expect(formatSdkLogArgs(["[log_1] sending", { body: new TextEncoder().encode('{"x":"line\\none"}'), n: 2 }])).toBe(`[log_1] sending { body: '{"x":"line\\\\none"}', n: 2 }`);
    expect(formatSdkLogArgs(["multi\nline", 3, null])).toBe("multi\nline 3 null");
    expect(formatSdkLogArgs([deep])).toBe("{ a: { b: { c: { d: { e: [Object] } } } } }");
    expect(formatSdkLogArgs([new Headers({ a: "b" })])).toMatch(/^Headers/);
  });

  it("cuts a long line to SDK_LOG_MAX_CHARS, saying how much was left out", () => {
    const text = formatSdkLogArgs(["x".repeat(SDK_LOG_MAX_CHARS + 10)]);
    expect(text).toBe(`${"x".repeat(SDK_LOG_MAX_CHARS)}… [10 more characters]`);
  });
});
