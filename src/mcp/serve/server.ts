/**
 * The MCP SDK side of `yiem mcp serve`: a factory of SDK `Server` instances (one per stdio
 * connection, one per HTTP request in the SDK's stateless mode) that all answer from one
 * ServeSession. Rules:
 * - capabilities: `tools` with `listChanged`; serverInfo `{name: "yiem", version}`;
 * - tools/list: the session's list (`name`, `title` when the label differs, `description`,
 *   `inputSchema` as the tool declares it), all in one page;
 * - tools/call: the session's call with the request's signal (notifications/cancelled, a closed
 *   HTTP stream, the connection's end) and, when the request carries a progress token, progress
 *   notifications, each sent before the result and PROGRESS_GAP_MS ahead of it; the result is
 *   projected through the SDK's codec for the negotiated era;
 * - `toolsChanged()` sends notifications/tools/list_changed on every live instance.
 * The SDK is imported by the caller (only `yiem mcp serve` loads it); types only here.
 */
import type { Server as SdkServer, ServerContext } from "@modelcontextprotocol/server";
import type { ServerIdentity } from "./stdio-wire.js";
import type { ServeSession } from "./session.js";

export type SdkModule = typeof import("@modelcontextprotocol/server");

/**
 * The pause between a call's last progress notification and its result. The official SDK client
 * handles a response at once but a notification a microtask later, and forgets the request's
 * progress handler with its response: progress read in the same chunk as the response is
 * dropped (seen about once in six runs of test/mcp/serve-stdio.test.ts on the idle machine).
 * The pause lets the client read the progress first; only calls that sent progress pay it.
 */
const PROGRESS_GAP_MS = 20;

export function serverIdentity(version: string): ServerIdentity {
  return { serverInfo: { name: "yiem", version }, capabilities: { tools: { listChanged: true } } };
}

export interface ServerFactory {
  create(): SdkServer;
  /** notifications/tools/list_changed on every live instance. */
  toolsChanged(): void;
  /** Closes every live instance. */
  closeAll(): Promise<void>;
}

export function createServerFactory(sdk: SdkModule, identity: ServerIdentity, session: ServeSession, onError: (error: Error) => void): ServerFactory {
  const live = new Set<SdkServer>();
  return {
    create() {
      const server = new sdk.Server(identity.serverInfo, { capabilities: identity.capabilities });
      server.onerror = onError;
      server.onclose = () => live.delete(server);
      server.setRequestHandler("tools/list", () => ({
        tools: session.list().map((tool) => ({
          name: tool.name,
          ...(tool.label && tool.label !== tool.name ? { title: tool.label } : {}),
          description: tool.description,
          inputSchema: tool.inputSchema as { type: "object"; [key: string]: unknown },
        })),
      }));
      server.setRequestHandler("tools/call", async (request, ctx: ServerContext) => {
        const { name, arguments: args, _meta } = request.params;
        const token = _meta?.progressToken;
        // Sent before the result: a client drops progress that arrives after its request's response.
        const progressSent: Array<Promise<void>> = [];
        const progress = token === undefined
          ? undefined
          : (value: number, message: string) => {
              progressSent.push(
                ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress: value, ...(message ? { message } : {}) } }).catch(() => {}),
              );
            };
        const result = await session.call(name, args ?? {}, { signal: ctx.mcpReq.signal, progress });
        await Promise.all(progressSent);
        if (progressSent.length > 0) await new Promise((resolve) => setTimeout(resolve, PROGRESS_GAP_MS));
        return server.projectCallToolResult(result as Parameters<SdkServer["projectCallToolResult"]>[0], undefined);
      });
      live.add(server);
      return server;
    },
    toolsChanged() {
      for (const server of live) server.sendToolListChanged().catch(() => {});
    },
    async closeAll() {
      await Promise.allSettled([...live].map((server) => server.close()));
    },
  };
}
