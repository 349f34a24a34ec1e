/**
 * MCP tools as yiem tools, and MCP results in yiem's content model. Rules (docs/mcp.md):
 * - text stays text; images become image parts; an embedded text resource becomes text headed
 *   by its URI; audio, binary resources and resource links become a one-line placeholder;
 * - `structuredContent` goes into `details.structuredContent` (and, as JSON text, into the
 *   content when the server sent no content);
 * - `isError: true` is an error result with the server's content; a protocol error, a timeout or
 *   an invalid result (one that breaks its outputSchema) is an error result naming the problem;
 * - details always name the origin: `{mcp: {server, tool}}`.
 */
import type { CallToolResult, Tool as McpToolDef } from "@modelcontextprotocol/client";
import type { ContentPart, JsonSchema, Tool, ToolResult } from "../tools/types.js";
import type { McpConnection } from "./connection.js";

export interface McpToolDetails {
  mcp: { server: string; tool: string };
  structuredContent?: unknown;
  /** Placeholders' full data is not kept; `_meta` of the result when the server sent one. */
  meta?: unknown;
}

/** The yiem tool for one MCP tool of `connection`, offered as `name`. */
export function toYiemTool(connection: McpConnection, def: McpToolDef, name: string): Tool<Record<string, unknown>, McpToolDetails> {
  const server = connection.server.name;
  const origin = { server, tool: def.name };
  const { $schema: _ignored, ...schema } = (def.inputSchema ?? { type: "object" }) as JsonSchema;
  const inputSchema = { ...schema, type: "object" } as JsonSchema;
  const description = def.description ?? def.title ?? `Tool "${def.name}" of MCP server ${server}`;
  return {
    name,
    label: def.title ?? def.annotations?.title ?? def.name,
    description,
    inputSchema,
    ...(connection.server.toolTimeoutMs > 0 ? { timeoutMs: connection.server.toolTimeoutMs } : {}),
    async execute(_id, args, signal, onPartialResult) {
      let result: CallToolResult;
      try {
        result = await connection.callTool(def.name, args ?? {}, {
          signal,
          definition: def,
          onProgress: (p) => {
            const of = p.total !== undefined ? `/${p.total}` : "";
            onPartialResult({ content: [{ type: "text", text: `progress ${p.progress}${of}${p.message ? `: ${p.message}` : ""}` }], details: { mcp: origin, progress: p } });
          },
        });
      } catch (error) {
        return errorResult(`MCP server ${server}, tool "${def.name}": ${callFailure(error)}`, origin);
      }
      return mapResult(result, origin);
    },
  };
}

function errorResult(text: string, origin: McpToolDetails["mcp"]): ToolResult<McpToolDetails> {
  return { content: [{ type: "text", text }], details: { mcp: origin }, isError: true };
}

function callFailure(error: unknown): string {
  const e = error as { code?: unknown; message?: string; name?: string };
  if (e?.code === "REQUEST_TIMEOUT") return `timed out (${e.message ?? "request timeout"})`;
  if (e?.name === "AbortError") return "cancelled";
  return e?.message ?? String(error);
}

/** One MCP CallToolResult in yiem's content model (module rules). */
export function mapResult(result: CallToolResult, origin: McpToolDetails["mcp"]): ToolResult<McpToolDetails> {
  if (!result || typeof result !== "object" || (result.content !== undefined && !Array.isArray(result.content))) {
    return errorResult(`MCP server ${origin.server}, tool "${origin.tool}" returned an invalid result`, origin);
  }
  const content: ContentPart[] = [];
  for (const part of result.content ?? []) content.push(mapPart(part as unknown as Record<string, unknown>));
  const details: McpToolDetails = { mcp: origin };
  if (result.structuredContent !== undefined) {
    details.structuredContent = result.structuredContent;
    if (content.length === 0) content.push({ type: "text", text: JSON.stringify(result.structuredContent) });
  }
  if (result._meta !== undefined) details.meta = result._meta;
  return { content, details, ...(result.isError === true ? { isError: true } : {}) };
}

function mapPart(part: Record<string, unknown>): ContentPart {
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  const bytes = (b64: unknown) => Math.floor((str(b64).replace(/=+$/, "").length * 3) / 4);
  switch (part.type) {
    case "text":
      return { type: "text", text: str(part.text) };
    case "image":
      if (typeof part.data === "string" && typeof part.mimeType === "string") return { type: "image", data: part.data, mimeType: part.mimeType };
      return { type: "text", text: "[image without data]" };
    case "audio":
      return { type: "text", text: `[audio ${str(part.mimeType) || "unknown type"}, ${bytes(part.data)} bytes, not shown]` };
    case "resource": {
      const resource = (part.resource ?? {}) as Record<string, unknown>;
      const uri = str(resource.uri);
      if (typeof resource.text === "string") return { type: "text", text: `[resource ${uri}]\n${resource.text}` };
      return { type: "text", text: `[resource ${uri} ${str(resource.mimeType) || "binary"}, ${bytes(resource.blob)} bytes, not shown]` };
    }
    case "resource_link":
      return { type: "text", text: `[resource link ${str(part.uri)}${part.name ? ` (${str(part.name)})` : ""}${part.description ? `: ${str(part.description)}` : ""}]` };
    default:
      return { type: "text", text: `[${typeof part.type === "string" ? part.type : "unknown"} content, not shown]` };
  }
}
