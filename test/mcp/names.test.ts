/** MCP tool names (src/mcp/names.ts) and result mapping (src/mcp/tools.ts), as pure functions. */
import { describe, expect, it } from "vitest";
import { MAX_TOOL_NAME_LENGTH, mcpToolName, nameMcpTools } from "../../src/mcp/names.js";
import { mapResult } from "../../src/mcp/tools.js";

const TOOL_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

describe("mcp tool names", () => {
  it("mcp__<server>__<tool>, sanitised to the function-name rule", () => {
    expect(mcpToolName("github", "create_issue")).toBe("mcp__github__create_issue");
    expect(mcpToolName("fs", "read.file/v2 now")).toBe("mcp__fs__read_file_v2_now");
    expect(TOOL_NAME.test(mcpToolName("fs", "ünïcode✓"))).toBe(true);
  });

  it("a long name is cut to 64 characters with a stable hash suffix", () => {
    const raw = "a".repeat(80);
    const name = mcpToolName("server", raw);
    expect(name).toHaveLength(MAX_TOOL_NAME_LENGTH);
    expect(name).toMatch(/^mcp__server__a+_[0-9a-f]{10}$/);
    expect(mcpToolName("server", raw)).toBe(name);
    expect(mcpToolName("server", `${raw}b`)).not.toBe(name);
    expect(TOOL_NAME.test(name)).toBe(true);
  });

  it("a collision is resolved by suffix and reported, never dropped, whatever the order", () => {
    const tools = [{ server: "s", rawName: "a.b" }, { server: "s", rawName: "a_b" }, { server: "s", rawName: "a b" }];
    const { named, collisions } = nameMcpTools(tools);
    const byRaw = Object.fromEntries(named.map((n) => [n.rawName, n.name]));
    expect(byRaw["a_b"]).toBe("mcp__s__a_b");
    expect(byRaw["a.b"]).toMatch(/^mcp__s__a_b_[0-9a-f]{10}$/);
    expect(byRaw["a b"]).toMatch(/^mcp__s__a_b_[0-9a-f]{10}$/);
    expect(new Set(Object.values(byRaw)).size).toBe(3);
    expect(collisions).toHaveLength(1);
    expect(collisions[0]).toContain("mcp__s__a_b");
    const reversed = Object.fromEntries(nameMcpTools([...tools].reverse()).named.map((n) => [n.rawName, n.name]));
    expect(reversed).toEqual(byRaw);
  });
});

describe("mcp result mapping", () => {
  const origin = { server: "s", tool: "t" };
  it("text, image, embedded text resource, binary resource, audio, resource link", () => {
    const result = mapResult({
      content: [
        { type: "text", text: "hello" },
        { type: "image", data: "aGVsbG8=", mimeType: "image/png" },
        { type: "resource", resource: { uri: "file:///a.txt", text: "file text", mimeType: "text/plain" } },
        { type: "resource", resource: { uri: "file:///a.bin", blob: "AAAA", mimeType: "application/octet-stream" } },
        { type: "audio", data: "AAAAAAAA", mimeType: "audio/wav" },
        { type: "resource_link", uri: "file:///b", name: "b" },
      ],
    } as never, origin);
    expect(result.content).toEqual([
      { type: "text", text: "hello" },
      { type: "image", data: "aGVsbG8=", mimeType: "image/png" },
      { type: "text", text: "[resource file:///a.txt]\nfile text" },
      { type: "text", text: "[resource file:///a.bin application/octet-stream, 3 bytes, not shown]" },
      { type: "text", text: "[audio audio/wav, 6 bytes, not shown]" },
      { type: "text", text: "[resource link file:///b (b)]" },
    ]);
    expect(result.isError).toBeUndefined();
    expect(result.details).toEqual({ mcp: origin });
  });

  it("structuredContent into details, and as text when there is no content; isError kept", () => {
    const result = mapResult({ content: [], structuredContent: { n: 1 }, isError: true } as never, origin);
    expect(result.content).toEqual([{ type: "text", text: '{"n":1}' }]);
    expect(result.details).toEqual({ mcp: origin, structuredContent: { n: 1 } });
    expect(result.isError).toBe(true);
  });

  it("an invalid result is an error result", () => {
    expect(mapResult({ content: "nope" } as never, origin)).toMatchObject({ isError: true, content: [{ type: "text", text: 'MCP server s, tool "t" returned an invalid result' }] });
  });
});
