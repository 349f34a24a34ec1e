/**
 * Reading SSE is linear in the input: each piece is searched for line breaks from where the last
 * search stopped, never the growing line again. Checked by counting the characters the parser's
 * line-break searches may cover (RegExp exec from lastIndex to the end of the piece), not by time:
 * a quadratic parser (re-scanning the joined line per piece) covers ~500 times the input here.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { SseParser } from "../../../src/provider/openai-stream.js";
import { createOpenAIProvider } from "../../../src/provider/openai.js";
import { startChatServer, streamChunk, type ChatServer } from "../../support/chat-server.js";

let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const MB = 1024 * 1024;

describe("SSE line parsing is linear", () => {
  it("a 32 MB single data line in 64 KB pieces: each character searched about once, the line exact", () => {
    const payload = "x".repeat(32 * MB);
    const text = `data: ${payload}\r\n\r\n`;
    const events: string[] = [];
    const parser = new SseParser((data) => events.push(data));
    const exec = RegExp.prototype.exec;
    let searched = 0;
    const spy = vi.spyOn(RegExp.prototype, "exec").mockImplementation(function (this: RegExp, input: string) {
      searched += input.length - (this.global || this.sticky ? this.lastIndex : 0);
      return exec.call(this, input);
    });
    try {
      for (let i = 0; i < text.length; i += 64 * 1024) parser.push(text.slice(i, i + 64 * 1024));
      parser.end();
    } finally {
      spy.mockRestore();
    }
    expect(events).toHaveLength(1);
    expect(events[0].length).toBe(payload.length);
    expect(events[0] === payload).toBe(true);
    // The pieces are searched once each (plus the few characters after each line break).
    expect(searched).toBeGreaterThanOrEqual(text.length - 64 * 1024);
    expect(searched).toBeLessThanOrEqual(text.length + 64);
  });

  it("line breaks split across pieces (CR | LF, lone CR, LF) still end lines exactly once", () => {
    const events: string[] = [];
    const parser = new SseParser((data) => events.push(data));
    for (const piece of ["data: a\r", "\n\r", "\ndata: b\r", "\r", "data: c\n", "\n", "data: d"]) parser.push(piece);
    parser.end();
    expect(events).toEqual(["a", "b", "c", "d"]);
  });

  it("a streamed answer whose one chunk is an 8 MB line arrives whole through the provider", async () => {
    const content = "y".repeat(8 * MB);
    server = await startChatServer([{ kind: "sse", chunks: [streamChunk({ role: "assistant", content }), streamChunk({}, "stop")] }]);
    const provider = createOpenAIProvider({ model: "m", baseURL: server.url, apiKey: "k-123456", maxRetries: 0 });
    const response = await provider.complete({ messages: [{ role: "user", content: "long" }], tools: [], signal: new AbortController().signal });
    expect(response.message.content.length).toBe(content.length);
    expect(response.finishReason).toBe("stop");
    server.assertClean();
  });
});
