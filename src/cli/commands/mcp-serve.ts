/**
 * `yiem mcp serve`: the command's entry (docs/mcp.md, "Serving"; the rules are in
 * ./mcp-serve-run.ts). Start-up rule: the stdio channel starts here, before the spec, the tools
 * and the SDK are loaded, so the client's `initialize` is answered at once
 * (../../mcp/serve/stdio-wire.ts); the SDK's import starts next and runs while the rest loads.
 * This module imports nothing else that is not needed for that.
 */
import type { CliIo } from "../io.js";
import { packageVersion } from "../../package-info.js";

export async function handler(argv: Record<string, unknown>, io: CliIo): Promise<number> {
  const { serverIdentity } = await import("../../mcp/serve/server.js");
  const identity = serverIdentity(packageVersion());
  const wire = argv.http === undefined ? new (await import("../../mcp/serve/stdio-wire.js")).StdioWire(identity, io.stdin, io.stdout) : undefined;
  const sdkLoading = import("@modelcontextprotocol/server");
  sdkLoading.catch(() => {});
  const { serveSession } = await import("./mcp-serve-run.js");
  return serveSession(argv, io, { ...(wire ? { wire } : {}), identity, sdkLoading });
}
