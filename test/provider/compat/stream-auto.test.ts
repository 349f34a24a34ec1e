/**
 * `model.stream: auto` (the new default). A llama.cpp build that cannot stream
 * with tools answers 500 "Cannot use tools with stream"; under auto the request is sent once more
 * without streaming (not counted as a retry), and the run streams no more. `true` keeps failing
 * with the server's message, `false` never streams.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { refusesStreamingWithTools } from "../../../src/provider/resend.js";
import { reply, startChatServer, type ChatServer } from "../../support/chat-server.js";
import { profiles } from "../../support/server-profiles.js";
import { compatProject, type CompatProject } from "../../support/compat-cli.js";

let byDefault: CompatProject;
let always: CompatProject;
let never: CompatProject;
let server: ChatServer | undefined;
beforeAll(async () => {
  byDefault = await compatProject();
  always = await compatProject({ stream: true, maxRetries: 3 });
  never = await compatProject({ stream: false });
});
afterAll(async () => {
  await byDefault.remove();
  await always.remove();
  await never.remove();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const script = () => [reply.json({ toolCalls: [{ name: "shout", arguments: '{"text":"ab"}' }] }), reply.json({ content: "AB it is" })];

describe("llama.cpp without streaming for tools (through the CLI)", () => {
  it("default (auto): one resend without stream, not a retry (maxRetries 0); later turns never stream; exit 0", async () => {
    server = await startChatServer(script(), { profile: profiles.llamaCppNoStreamTools() });
    const r = await byDefault.run(server, "shout ab");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("AB it is\n");
    expect(server.requests.map((b) => [b.stream, b.stream_options])).toEqual([[true, { include_usage: true }], [undefined, undefined], [undefined, undefined]]);
    const retries = r.events.filter((e) => e.type === "retry");
    expect(retries).toEqual([expect.objectContaining({ attempt: 1, delayMs: 0, status: 500 })]);
    expect(retries[0].message).toBe("HTTP 500: Cannot use tools with stream (sending the request again without streaming)");
    expect(r.events.filter((e) => e.type === "toolExecutionEnd")).toHaveLength(1);
    server.assertClean({ refusals: 1 });
  });

  it("stream: true keeps streaming: the run fails with the server's message, retried once then stopped as a repeat; exit 1", async () => {
    server = await startChatServer(script(), { profile: profiles.llamaCppNoStreamTools() });
    const r = await always.run(server, "shout ab");
    expect(r.code).toBe(1);
    expect(r.end.error).toContain("HTTP 500: Cannot use tools with stream");
    expect(server.requests.every((b) => b.stream === true)).toBe(true);
    expect(server.requests).toHaveLength(2);
    server.assertClean({ refusals: 2 });
  });

  it("stream: false never streams; exit 0", async () => {
    server = await startChatServer(script(), { profile: profiles.llamaCppNoStreamTools() });
    const r = await never.run(server, "shout ab");
    expect(r.code, r.stderr).toBe(0);
    expect(server.requests.every((b) => !("stream" in b))).toBe(true);
    server.assertClean();
  });

  it("auto without tools on offer streams as before", async () => {
    server = await startChatServer([reply.stream({ content: "hi" })], { profile: profiles.llamaCppNoStreamTools() });
    const r = await byDefault.run(server, "hi", ["--deny-tools", "*"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("hi\n");
    server.assertClean();
  });
});

describe("refusesStreamingWithTools", () => {
  it("names streaming and tools and says it cannot; other errors are not it", () => {
    expect(refusesStreamingWithTools(500, "Cannot use tools with stream")).toBe(true);
    expect(refusesStreamingWithTools(400, "Streaming is not supported with tools for this model")).toBe(true);
    expect(refusesStreamingWithTools(500, "tools param requires --jinja flag")).toBe(false);
    expect(refusesStreamingWithTools(500, "the stream was closed")).toBe(false);
    expect(refusesStreamingWithTools(503, "Cannot use tools with stream")).toBe(false);
  });
});
