/**
 * The stdio channel of `yiem mcp serve` (src/mcp/serve/stdio-wire.ts): its early `initialize`
 * answer is the SDK server's own answer for every protocol version, messages are framed by
 * newlines whatever the chunks, queued until the SDK connects, and bad lines are reported and
 * skipped.
 */
import { PassThrough } from "node:stream";
import { InMemoryTransport, Server, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { serverIdentity } from "../../src/mcp/serve/server.js";
import { initializeAnswer, LEGACY_PROTOCOL_VERSIONS, StdioWire, type WireMessage } from "../../src/mcp/serve/stdio-wire.js";

const identity = serverIdentity("9.9.9");

/** What the SDK's Server answers to `initialize` requesting `version`. */
async function sdkAnswer(version: string): Promise<unknown> {
  const [client, server] = InMemoryTransport.createLinkedPair();
  const sdk = new Server(identity.serverInfo, { capabilities: identity.capabilities });
  await sdk.connect(server);
  const answer = new Promise<unknown>((resolve) => {
    client.onmessage = (message) => resolve((message as { result?: unknown }).result);
  });
  await client.start();
  await client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "1" } } });
  const result = await answer;
  await sdk.close();
  return result;
}

function wire() {
  const input = new PassThrough();
  const output = new PassThrough();
  let written = "";
  output.setEncoding("utf8").on("data", (d: string) => (written += d));
  const errors: string[] = [];
  const received: WireMessage[] = [];
  const w = new StdioWire(identity, input, output);
  w.onerror = (error) => errors.push(error.message);
  w.onmessage = (message) => received.push(message);
  return { w, input, errors, received, written: () => written };
}
const tick = () => new Promise((r) => setImmediate(r));

describe("the early initialize answer", () => {
  it("uses the SDK's supported versions", () => {
    expect([...LEGACY_PROTOCOL_VERSIONS]).toEqual([...SUPPORTED_PROTOCOL_VERSIONS]);
  });

  it.each([...SUPPORTED_PROTOCOL_VERSIONS, "1999-01-01", "2026-07-28"])("equals the SDK server's answer when the client asks for %s", async (version) => {
    expect(initializeAnswer(version, identity)).toEqual(await sdkAnswer(version));
  });
});

describe("StdioWire", () => {
  it("answers a first initialize before the SDK connects, queues every message, and drops the SDK's duplicate answer", async () => {
    const { w, input, received, written, errors } = wire();
    input.write('{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}\n{"jsonrpc":"2.0","method":"notifications/ini');
    await tick();
    expect(JSON.parse(written())).toEqual({ jsonrpc: "2.0", id: 7, result: initializeAnswer("2025-06-18", identity) });
    input.write('tialized"}\r\n');
    await tick();
    expect(received).toEqual([]);
    await w.start();
    expect(received.map((m) => m.method)).toEqual(["initialize", "notifications/initialized"]);
    await w.send({ jsonrpc: "2.0", id: 7, result: initializeAnswer("2025-06-18", identity) });
    await w.send({ jsonrpc: "2.0", id: 8, result: {} });
    expect(written().trim().split("\n").map((l) => JSON.parse(l).id)).toEqual([7, 8]);
    expect(errors).toEqual([]);
  });

  it("does not answer early for a 2026-07-28 client or when initialize is not the first message; a differing SDK answer is reported", async () => {
    const modern = wire();
    modern.input.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}\n');
    await tick();
    expect(modern.written()).toBe("");
    const late = wire();
    late.input.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}\n');
    await tick();
    expect(late.written()).toBe("");
    const differs = wire();
    differs.input.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}\n');
    await tick();
    await differs.w.start();
    await differs.w.send({ jsonrpc: "2.0", id: 1, result: { protocolVersion: "2025-06-18", other: true } });
    expect(differs.errors[0]).toMatch(/^the early initialize answer .* differs from the SDK's/);
  });

  it("reports a line that is not JSON or not an object and goes on; stdin's end closes it once", async () => {
    const { w, input, received, errors } = wire();
    let closed = 0;
    let ended = 0;
    w.onclose = () => void closed++;
    w.onEnd(() => void ended++);
    await w.start();
    input.write('not json\n[1,2]\n\n{"jsonrpc":"2.0","id":3,"method":"tools/list"}\n');
    await tick();
    expect(errors).toEqual(["a line on stdin is not JSON: not json", "a line on stdin is not a JSON-RPC message: [1,2]"]);
    expect(received.map((m) => m.id)).toEqual([3]);
    input.end();
    await tick();
    await w.close();
    expect([closed, ended, w.isClosed]).toEqual([1, 1, true]);
    await expect(w.send({ jsonrpc: "2.0", id: 4, result: {} })).rejects.toThrow("the stdio channel is closed");
  });
});
