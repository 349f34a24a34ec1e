/**
 * Seeing the wire: `yiem run --debug` and `YIEM_DEBUG=http` add one `debug` event per HTTP request
 * to the model server (method, URL, status, timings, retry number, both bodies, redacted and cut
 * to 4000 characters; no headers), agentStart names the base URL, and the pretty view shows the
 * exchanges. The API key (and so its Authorization header) never appears anywhere.
 */
import { afterEach, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { compatProject, type CompatProject } from "../support/compat-cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

const KEY = "sk-compat-test"; // the key compatProject's runs send
let server: ChatServer | undefined;
let project: CompatProject | undefined;

afterEach(async () => {
  await server?.close();
  await project?.remove();
  server = undefined;
  project = undefined;
});

type Debug = { type: "debug"; kind: string; method: string; url: string; status: number | null; headersMs: number; durationMs: number; retry: number; requestBody: string; responseBody: string; error?: string };
const debugEvents = (events: Array<{ type: string }>) => events.filter((e) => e.type === "debug") as unknown as Debug[];

describe("yiem run --debug", () => {
  it("adds a debug event per request, with both bodies, and agentStart names the base URL", async () => {
    server = await startChatServer([
      reply.stream({ toolCalls: [{ id: "c1", name: "shout", arguments: '{"text":"hi"}' }] }),
      reply.json({ content: `HI (the key is ${KEY})` }),
    ]);
    project = await compatProject();
    const r = await project.run(server, "shout hi", ["--debug"]);
    expect(r.code, r.stderr).toBe(0);
    const start = r.events[0] as Record<string, unknown>;
    expect(start.baseURL).toBe(server.url.replace(/\/$/, ""));
    const debug = debugEvents(r.events);
    expect(debug).toHaveLength(2);
    for (const event of debug) {
      expect(event).toMatchObject({ kind: "http", method: "POST", url: `${server.url}/chat/completions`, status: 200, retry: 0 });
      expect(event.durationMs).toBeGreaterThanOrEqual(event.headersMs);
      expect(JSON.parse(event.requestBody).model).toBe("test-model");
    }
    expect(debug[0].responseBody).toMatch(/^data: \{/);
    expect(debug[0].responseBody).toContain('"name":"shout"');
    expect(JSON.parse(debug[1].requestBody).messages.at(-1)).toMatchObject({ role: "tool", content: "HI" });
    // The server echoed the key: the debug event shows it redacted, like every other event.
    expect(debug[1].responseBody).toContain("the key is ***");
    // Each exchange comes before the turn's messageEnd.
    const types = r.events.map((e) => e.type);
    expect(types.indexOf("debug")).toBeLessThan(types.indexOf("messageEnd"));
    expect(r.stderr).not.toContain(KEY);
    expect(r.stdout).not.toContain(KEY);
    expect(r.stderr.toLowerCase()).not.toContain("authorization");
    expect(r.stderr).not.toContain("Bearer");
    server.assertClean();
  });

  it("YIEM_DEBUG=http turns them on too; without either there are none", async () => {
    server = await startChatServer([reply.json({ content: "one" }), reply.json({ content: "two" })]);
    project = await compatProject();
    const on = await runCli(["run", "hi"], { cwd: project.dir, env: { TEST_BASE_URL: server.url, TEST_API_KEY: KEY, YIEM_DEBUG: "tools,http" } });
    expect(on.code, on.stderr).toBe(0);
    expect(debugEvents(on.events)).toHaveLength(1);
    const off = await project.run(server, "hi");
    expect(off.code, off.stderr).toBe(0);
    expect(debugEvents(off.events)).toHaveLength(0);
  });

  it("numbers the retries and keeps the refused attempt's status and body", async () => {
    server = await startChatServer([reply.error(429, "slow down please", { "retry-after-ms": "10" }), reply.json({ content: "done" })]);
    project = await compatProject();
    const r = await project.run(server, "hi", ["--debug", "--max-retries", "1"]);
    expect(r.code, r.stderr).toBe(0);
    const debug = debugEvents(r.events);
    expect(debug.map((e) => [e.status, e.retry])).toEqual([[429, 0], [200, 1]]);
    expect(debug[0].responseBody).toContain("slow down please");
    const types = r.events.map((e) => e.type);
    expect(types.indexOf("retry")).toBeGreaterThan(types.indexOf("debug"));
  });

  it("cuts a long body to 4000 characters and says how much was cut", async () => {
    const long = "x".repeat(10_000);
    server = await startChatServer([reply.json({ content: long })]);
    project = await compatProject();
    const r = await project.run(server, "hi", ["--debug"]);
    expect(r.code, r.stderr).toBe(0);
    const [event] = debugEvents(r.events);
    const match = /… \[(\d+) more characters\]$/.exec(event.responseBody);
    expect(match, event.responseBody.slice(-80)).not.toBeNull();
    const kept = event.responseBody.length - match![0].length;
    expect(kept).toBe(4000);
    expect(kept + Number(match![1])).toBeGreaterThan(10_000);
    expect(r.stdout).toBe(`${long}\n`);
  });

  it("a request that gets no response is a debug event with status null and the error", async () => {
    project = await compatProject();
    const r = await runCli(["run", "hi", "--debug"], { cwd: project.dir, env: { TEST_BASE_URL: "http://127.0.0.1:9/v1", TEST_API_KEY: KEY } });
    expect(r.code).toBe(1);
    const [event] = debugEvents(r.events);
    expect(event).toMatchObject({ status: null, url: "http://127.0.0.1:9/v1/chat/completions", responseBody: "" });
    expect(event.error).toBeTruthy();
    expect(r.stderr).not.toContain(KEY);
  });

  it("the pretty view shows each exchange and the server", async () => {
    server = await startChatServer([reply.stream({ content: "pretty answer" })]);
    project = await compatProject();
    const r = await runCli(["run", "hi", "--debug", "--events", "pretty"], { cwd: project.dir, env: { TEST_BASE_URL: server.url, TEST_API_KEY: KEY } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`at ${server.url}`);
    expect(r.stderr).toMatch(new RegExp(`⇄ POST ${server.url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/chat/completions 200 `));
    expect(r.stderr).toMatch(/request: \{"model":"test-model"/);
    expect(r.stderr).toMatch(/response: data: /);
    expect(r.stderr).not.toContain(KEY);
  });
});
