/**
 * The channel guard (src/channels/guard.ts), in process: the one module `yiem run`, `yiem tools`
 * and later `yiem mcp serve` use to keep stdout and stderr theirs while tool or hook code runs.
 */
import { describe, expect, it } from "vitest";
import { ExitCalledError, guardChannels, MAX_LINE_CHARS, ownWrite, type CapturedOutput } from "../../src/channels/guard.js";

describe("guardChannels", () => {
  it("captures direct writes (console writes through them) as lines, lets yiem's own writes through, and refuses process.exit until released", () => {
    const seen: CapturedOutput[] = [];
    const written: string[] = [];
    const realWrite = process.stdout.write;
    // Stands in for the real stream underneath, to see what gets through.
    (process.stdout as unknown as { write: (chunk: string) => boolean }).write = (chunk: string) => {
      written.push(chunk);
      return true;
    };
    const guard = guardChannels({ onOutput: (line) => seen.push(line), onUncaught: () => {} });
    try {
      process.stdout.write("hello world\n");
      process.stdout.write("part ");
      process.stdout.write(Buffer.from("of a line\n"));
      process.stderr.write("to stderr\n");
      process.stdout.write("x".repeat(MAX_LINE_CHARS + 10) + "\n");
      ownWrite(() => process.stdout.write("yiem's own\n"));
      expect(() => process.exit(0)).toThrow(ExitCalledError);
      process.stdout.write("a line without its end");
      guard.flush();
    } finally {
      guard.release();
      (process.stdout as unknown as { write: typeof realWrite }).write = realWrite;
    }
    expect(written).toEqual(["yiem's own\n"]);
    expect(seen.slice(0, 4)).toEqual([
      { stream: "stdout", text: "hello world" },
      { stream: "stdout", text: "part of a line" },
      { stream: "stderr", text: "to stderr" },
      { stream: "stdout", text: `${"x".repeat(MAX_LINE_CHARS)} [… line cut: 10 more characters]` },
    ]);
    expect(seen[4]).toEqual({ stream: "stdout", text: "a line without its end" });
    // Released: process.exit is Node's again (not called here: it would end the test run).
    expect(process.exit.toString()).not.toMatch(/ExitCalledError/);
  });
});
