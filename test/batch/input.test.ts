/**
 * The batch input (src/batch/input.ts, lines read by src/batch/lines.ts): streamed lines as text
 * (CRLF, no final newline, a UTF-8 character across a read chunk's end, a line over the cap
 * skipped without being held), and each line form with its errors naming the line.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InputLineError, parseItem } from "../../src/batch/input.js";
import { MAX_LINE_BYTES, readTextLines, type InputLine } from "../../src/batch/lines.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-input-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

let files = 0;
async function lines(parts: Array<string | Buffer>): Promise<InputLine[]> {
  const file = join(dir, `lines-${++files}.jsonl`);
  await writeFile(file, Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part) : part))));
  const out: InputLine[] = [];
  for await (const line of readTextLines(file)) out.push(line);
  return out;
}

const item = (text: string, line = 1) => parseItem({ line, text });
const failure = (text: string, line = 1) => {
  try {
    parseItem({ line, text });
  } catch (error) {
    expect(error).toBeInstanceOf(InputLineError);
    return (error as Error).message;
  }
  throw new Error("no error");
};

describe("readTextLines", () => {
  it("splits at \\n, drops a \\r before it, keeps a last line without newline, numbers blank lines too", async () => {
    expect(await lines(["a\r\nb", "c\n\n", "last"])).toEqual([
      { line: 1, text: "a" },
      { line: 2, text: "bc" },
      { line: 3, text: "" },
      { line: 4, text: "last" },
    ]);
  });

  it("decodes a UTF-8 character that a read chunk's end splits (a line is decoded whole)", async () => {
    const pad = "p".repeat(4 * 1024 * 1024 - 1); // the first 4 MiB chunk ends inside "é"
    expect(await lines([`${pad}é€😀\n`, "next"])).toEqual([{ line: 1, text: `${pad}é€😀` }, { line: 2, text: "next" }]);
  });

  it("reports a line over the cap by its length, without holding it, and goes on with the next", async () => {
    const big = "x".repeat(MAX_LINE_BYTES / 4);
    const result = await lines(["ok\n", big, big, big, big, "y\nnext\n"]);
    expect(result).toEqual([{ line: 1, text: "ok" }, { line: 2, tooLong: MAX_LINE_BYTES + 1 }, { line: 3, text: "next" }]);
  });
});

describe("parseItem", () => {
  it("object lines, JSON-string and plain lines (line number as id), OpenAI batch-request lines, blank lines", () => {
    expect(item(' {"id": "a", "prompt": "p", "stdin": "s", "attachments": ["f.txt"], "vars": {"x": 1}}')).toEqual({ id: "a", line: 1, prompt: "p", stdin: "s", attachments: ["f.txt"], vars: { x: 1 } });
    expect(item('{"id": 12, "vars": {}}', 3)).toEqual({ id: "12", line: 3, vars: {} });
    expect(item('"a \\"quoted\\" prompt"', 4)).toEqual({ id: "4", line: 4, prompt: 'a "quoted" prompt' });
    expect(item("[bug] plain text", 5)).toEqual({ id: "5", line: 5, prompt: "[bug] plain text" });
    expect(item('{"custom_id": "r1", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "m", "messages": [{"role": "user", "content": "hi"}]}}')).toEqual({ id: "r1", line: 1, messages: [{ role: "user", content: "hi" }] });
    expect(item("   ")).toBeNull();
  });

  it("names the line and the problem", () => {
    expect(failure("{oops", 7)).toMatch(/^line 7: not valid JSON/);
    expect(failure('"unterminated', 2)).toMatch(/^line 2: not valid JSON/);
    expect(failure("{}")).toBe('line 1: an object line needs "id"');
    expect(failure('{"id": ""}')).toBe('line 1: "id" must not be empty');
    expect(failure('{"id": 1.5}')).toBe('line 1: "id" must be a string (got 1.5)');
    expect(failure(`{"id": "${"i".repeat(513)}"}`)).toBe('line 1: "id" is 513 characters long, more than the 512 an id may have');
    expect(failure('{"id": "a", "promt": "x"}')).toBe('line 1 (id "a"): unknown key "promt" (an item has id, prompt, stdin, attachments, vars)');
    expect(failure('{"id": "a", "prompt": 3}')).toBe('line 1 (id "a"): "prompt" must be a string');
    expect(failure('{"id": "a", "attachments": ["-"]}')).toBe('line 1 (id "a"): "attachments" cannot name - (stdin): give the text as "stdin"');
    expect(failure('{"id": "a", "vars": []}')).toBe('line 1 (id "a"): "vars" must be an object');
    expect(failure('{"custom_id": "r", "url": "/v1/embeddings", "body": {"messages": [{}]}}')).toBe('line 1 (id "r"): "url" must be /v1/chat/completions (got "/v1/embeddings")');
    expect(failure('{"custom_id": "r", "body": {"messages": []}}')).toBe('line 1 (id "r"): "body.messages" must be a non-empty array of messages');
    expect(failure('{"custom_id": "r", "body": {}, "extra": 1}')).toBe('line 1 (id "r"): unknown key "extra" (a batch-request line has custom_id, method, url, body)');
  });
});
