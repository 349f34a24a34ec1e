/**
 * The check pass's fast id path (src/batch/line-id.ts) against the full parse the run pass does
 * (src/batch/input.ts parseItem): whenever the fast path reads an id it must be the one
 * JSON.parse gives — repeated keys, escapes, whitespace, custom_id beside id, number and long
 * ids, non-ASCII — and where it cannot decide, `lineId` parses the line.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fastLineId, IdSpanReader, lineId, LINE_NUMBER, SPAN, BLANK } from "../../src/batch/line-id.js";
import { hashId, hashIdBytes, hashLineNumber } from "../../src/batch/id-index.js";
import { InputLineError, parseItem } from "../../src/batch/input.js";

const bytes = (text: string) => Buffer.from(text, "utf8");
const fast = (text: string, line = 1) => {
  const b = bytes(text);
  return fastLineId(b, 0, b.length, line);
};
const idByLineId = (text: string, line = 1) => {
  const b = bytes(text);
  return lineId(b, 0, b.length, line);
};
/** The id the run pass gives the line: parseItem's, or "bad" when the line is a bad line. */
const parsedId = (text: string, line = 1) => {
  try {
    return parseItem({ line, text })?.id ?? null;
  } catch (error) {
    if (error instanceof InputLineError) return "bad";
    throw error;
  }
};

describe("fastLineId", () => {
  it("reads the common shapes without parsing", () => {
    expect(fast('{"id":"issue-17","prompt":"why?"}')).toBe("issue-17");
    expect(fast('{"id":"a b/c:d"}')).toBe("a b/c:d");
    expect(fast('{"custom_id":"req-1","method":"POST","body":{"messages":[]}}')).toBe("req-1");
    expect(fast("plain text prompt", 9)).toBe("9");
    expect(fast('"a JSON string prompt"', 4)).toBe("4");
    expect(fast("   \t ")).toBeNull();
    expect(fast("")).toBeNull();
  });

  it("gives up (undefined) where the id could differ from JSON.parse's, and lineId then parses", () => {
    const cases: Array<[string, string | null]> = [
      ['{"id":"a","prompt":"p","id":"b"}', "b"], // a repeated key: the last wins
      ['{"id":"a","\\u0069d":"b"}', "b"], // an escaped key spelling id
      ['{"id":"a","custom_id":"c","body":{"messages":[]}}', "c"], // custom_id makes it a batch-request line (where id is an unknown key)
      ['{"id":"a\\"b","prompt":"p"}', 'a"b'], // an escape inside the id
      ['{"id":"\\u00e9t\\u00e9"}', "été"],
      ['{"id":"été"}', "été"], // non-ASCII
      ['{ "id": "spaced" }', "spaced"],
      ['  {"id":"indented"}', "indented"],
      ['{"id":12,"prompt":"p"}', "12"],
      ['{"prompt":"p","id":"later"}', "later"],
      ['{"id":"v","vars":{"id":"nested"}}', "v"],
      ["\u00a0plain after a no-break space", "1"],
      [`{"id":"${"x".repeat(512)}"}`, "x".repeat(512)],
    ];
    for (const [text, id] of cases) {
      if (!text.startsWith('{"id":"x') && !text.includes('"id":"v"')) expect(fast(text), text).toBeUndefined();
      expect(idByLineId(text), text).toBe(id);
      expect(parsedId(text), text).toBe(text.includes("custom_id") ? "bad" : id);
    }
    expect(fast(`{"id":"${"x".repeat(512)}"}`)).toBe("x".repeat(512));
    expect(fast(`{"id":"${"x".repeat(513)}"}`)).toBeUndefined();
    expect(() => idByLineId(`{"id":"${"x".repeat(513)}"}`, 3)).toThrow(/line 3.*more than the 512/);
    expect(() => idByLineId('{"id":""}', 2)).toThrow(/line 2.*must not be empty/);
    expect(() => idByLineId("{oops", 5)).toThrow(/line 5: not valid JSON/);
    // A no-break space is blank to trimStart but not to JSON: a bad line both ways.
    expect(fast('\u00a0{"id":"x"}')).toBeUndefined();
    expect(() => idByLineId('\u00a0{"id":"x"}', 6)).toThrow(/line 6: not valid JSON/);
    expect(parsedId('\u00a0{"id":"x"}')).toBe("bad");
  });

  it("reads a line inside a bigger buffer only up to its end (a CR already cut off by the reader)", () => {
    const buffer = bytes('{"id":"first","prompt":"x"}\n{"id":"second","id":"third"}\n');
    const end = buffer.indexOf(0x0a);
    expect(fastLineId(buffer, 0, end, 1)).toBe("first");
    expect(fastLineId(buffer, end + 1, buffer.length - 1, 2)).toBeUndefined();
  });

  it("property: for any object line, any key order, spacing and escapes, a fast id is the parsed id", () => {
    const key = fc.constantFrom("id", "custom_id", "prompt", "vars", "stdin", "\\u0069d", "i\\u0064", "custom\\u005fid", "x");
    const text = fc.string({ maxLength: 12, unit: fc.constantFrom("a", "é", '"', "\\", "\n", "d", "i", "_", " ", "\u2028", "1") });
    const value = fc.oneof(text.map((t) => JSON.stringify(t)), fc.integer({ min: -5, max: 99 }).map(String), fc.constant('{"id":"n"}'), fc.constant("[]"));
    const space = fc.constantFrom("", " ", "\t");
    const line = fc.array(fc.tuple(key, value, space), { minLength: 1, maxLength: 5 }).chain((pairs) => space.map((lead) => `${lead}{${pairs.map(([k, v, s]) => `${s}"${k}"${s}:${s}${v}`).join(",")}}`));
    fc.assert(
      fc.property(line, (text) => {
        const id = fast(text, 7);
        if (id !== undefined) {
          const parsed = parsedId(text, 7);
          // A line the fast path reads is either that id's item, or a bad line for another reason (a key yiem does not know).
          if (parsed !== "bad") expect(id).toBe(parsed);
          else expect(id).toBe(JSON.parse(text).custom_id ?? JSON.parse(text).id);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("property: one IdSpanReader over many lines of one buffer (remembering the next \\u and id\") reads each line as fastLineId reads it alone", () => {
    const piece = fc.constantFrom('{"id":"a"', '{"id":"b","prompt":"p"', ',"id":"x"', ',"custom_id":"y"', '\\u0069', "\\", "id\"", "_id\"", "}", " ", "é", "plain", '{"custom_id":"c"');
    const lineText = fc.array(piece, { maxLength: 6 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(fc.array(lineText, { minLength: 1, maxLength: 12 }), (texts) => {
        const buffer = Buffer.from(texts.join("\n"));
        const reader = new IdSpanReader();
        let start = 0;
        texts.forEach((text, i) => {
          const end = start + Buffer.byteLength(text);
          const kind = reader.read(buffer, start, end, 0);
          const chained = kind === BLANK ? null : kind === LINE_NUMBER ? String(i + 1) : kind === SPAN ? buffer.toString("latin1", reader.idStart, reader.idEnd) : undefined;
          expect(chained, text).toBe(fastLineId(Buffer.from(text), 0, Buffer.byteLength(text), i + 1));
          start = end + 1;
        });
      }),
      { numRuns: 2000 },
    );
  });

  it("an id's hash from its bytes, or from a line number, is its hash as a string", () => {
    const a = new Int32Array(2);
    const b = new Int32Array(2);
    fc.assert(
      fc.property(fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 40 }), (id) => {
        hashId(id, a);
        const bytes = Buffer.from(`xx${id}yy`, "latin1");
        hashIdBytes(bytes, 2, bytes.length - 2, b);
        expect([...b]).toEqual([...a]);
      }),
    );
    for (const n of [1, 9, 10, 12345, 2 ** 31 + 7]) {
      hashId(String(n), a);
      hashLineNumber(n, b);
      expect([...b], String(n)).toEqual([...a]);
    }
  });
});
