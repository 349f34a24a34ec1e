/**
 * `yiem mcp serve`'s tools/call (src/mcp/serve/server.ts): every progress notification reaches the
 * client before the call's result, however slowly the transport sends notifications — a client
 * drops progress that arrives after its request's response.
 */
import { InMemoryTransport } from "@modelcontextprotocol/server";
import * as sdk from "@modelcontextprotocol/server";
import { expect, it } from "vitest";
import { createServerFactory, serverIdentity } from "../../src/mcp/serve/server.js";
import type { ServeSession } from "../../src/mcp/serve/session.js";

const session = {
  list: () => [],
  async call(_name: string, _args: unknown, channel: Parameters<ServeSession["call"]>[2]) {
    channel.progress?.(1, "step 1");
    channel.progress?.(2, "step 2");
    return { content: [{ type: "text", text: "done" }] };
  },
  onToolsChanged() {},
  checkToolsChanged() {},
  idle: async () => {},
  totals: { calls: 0, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 }, errors: 0 },
} as unknown as ServeSession;

it("sends a call's progress notifications before its result, even when the transport sends notifications late", async () => {
  const [client, server] = InMemoryTransport.createLinkedPair();
  const send = server.send.bind(server);
  // Notifications leave 30 ms late; responses at once.
  server.send = async (message, options) => {
    if (!("id" in message)) await new Promise((resolve) => setTimeout(resolve, 30));
    return send(message, options);
  };
  const factory = createServerFactory(sdk, serverIdentity("9.9.9"), session, (error) => {
    throw error;
  });
  await factory.create().connect(server);
  const received: Array<Record<string, any>> = [];
  let answered!: () => void;
  const callAnswered = new Promise<void>((resolve) => (answered = resolve));
  client.onmessage = (message) => {
    received.push(message as Record<string, any>);
    if ((message as { id?: unknown }).id === 2) answered();
  };
  await client.start();
  await client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
  await client.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await client.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "any", arguments: {}, _meta: { progressToken: "p" } } });
  await callAnswered;
  const order = received.filter((m) => m.id !== 1).map((m) => (m.method === "notifications/progress" ? `progress ${m.params.progress}` : `result ${m.result?.content?.[0]?.text}`));
  expect(order).toEqual(["progress 1", "progress 2", "result done"]);
  await factory.closeAll();
});
