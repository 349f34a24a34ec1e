import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { RunResult } from "yiem";
import { printJson, printResult, printText, resultToJson } from "../../src/cli/output.js";
import { captureStream } from "../support/streams.js";

const result: RunResult = {
  runId: "run_9",
  text: "It is 18°C in Paris.",
  stopReason: "completed",
  turns: 2,
  toolCalls: 1,
  usage: { promptTokens: 120, completionTokens: 30, totalTokens: 150 },
  durationMs: 812,
  finishReason: "stop",
  messages: [{ role: "user", content: "weather in Paris?" }],
};

describe("printResult", () => {
  it("text: the final assistant text and one newline, in one write", async () => {
    const out = captureStream();
    await printResult(result, "text", out.stream);
    expect(out.text()).toBe("It is 18°C in Paris.\n");
    expect(out.writes()).toBe(1);
  });

  it("text: prints nothing when the run produced no text", async () => {
    const out = captureStream();
    await printResult({ ...result, text: "", stopReason: "maxTurns" }, "text", out.stream);
    expect(out.text()).toBe("");
  });

  it("text: keeps the answer byte for byte on a pipe, neutralises escapes on a terminal", async () => {
    const answer = "a\x1b]52;c;Zm9v\x07b\n\tc";
    const pipe = captureStream();
    await printResult({ ...result, text: answer }, "text", pipe.stream);
    expect(pipe.text()).toBe(`${answer}\n`);
    const tty = captureStream({ isTTY: true });
    await printResult({ ...result, text: answer }, "text", tty.stream);
    expect(tty.text()).toBe("ab\n\tc\n");
  });

  it("json: one line with exactly the documented keys, null where nothing applies", async () => {
    const out = captureStream();
    await printResult(result, "json", out.stream);
    const text = out.text();
    expect(text.endsWith("\n")).toBe(true);
    expect(text.trimEnd()).not.toContain("\n");
    expect(JSON.parse(text)).toEqual({
      runId: "run_9",
      text: "It is 18°C in Paris.",
      stopReason: "completed",
      finishReason: "stop",
      turns: 2,
      toolCalls: 1,
      usage: { promptTokens: 120, completionTokens: 30, totalTokens: 150 },
      durationMs: 812,
      error: null,
      exitCode: 0,
      sessionId: null,
      model: null,
      costUsd: null,
      structured: null,
    });
  });

  it("json: carries the exit code it is given (a signal, a failed side file)", async () => {
    const out = captureStream();
    await printResult({ ...result, stopReason: "aborted" }, "json", out.stream, 143);
    expect(JSON.parse(out.text())).toMatchObject({ stopReason: "aborted", exitCode: 143 });
  });

  it("json: adds error for a failed run and never the conversation", async () => {
    const json = resultToJson({ ...result, text: "", stopReason: "error", error: "HTTP 500" });
    expect(json).toMatchObject({ stopReason: "error", error: "HTTP 500", text: "" });
    expect(json).not.toHaveProperty("messages");
  });

  it("json: escapes C1 controls on a terminal and stays equal JSON", async () => {
    const out = captureStream({ isTTY: true });
    await printResult({ ...result, text: "x\x9b2Jy" }, "json", out.stream);
    expect(out.text()).not.toContain("\x9b");
    expect(JSON.parse(out.text()).text).toBe("x\x9b2Jy");
  });

  it("resolves quietly when the reader has gone away (EPIPE)", async () => {
    const gone = new Writable({
      write(_chunk, _enc, callback) {
        callback(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
      },
    });
    await expect(printResult(result, "text", gone)).resolves.toBeUndefined();
  });

  it("rejects on any other write error", async () => {
    const failing = new Writable({
      write(_chunk, _enc, callback) {
        callback(Object.assign(new Error("no space left"), { code: "ENOSPC" }));
      },
    });
    await expect(printText("x", failing)).rejects.toThrow("no space left");
  });
});

describe("printJson and printText", () => {
  it("printJson indents by 2 by default and prints one line with indent 0", async () => {
    const out = captureStream();
    await printJson({ a: 1, b: [true] }, out.stream);
    expect(out.text()).toBe('{\n  "a": 1,\n  "b": [\n    true\n  ]\n}\n');
    const compact = captureStream();
    await printJson({ a: 1 }, compact.stream, { indent: 0 });
    expect(compact.text()).toBe('{"a":1}\n');
  });

  it("printText adds a newline only when missing and prints nothing for empty text", async () => {
    const out = captureStream();
    await printText("one", out.stream);
    await printText("two\n", out.stream);
    await printText("", out.stream);
    expect(out.text()).toBe("one\ntwo\n");
  });
});
