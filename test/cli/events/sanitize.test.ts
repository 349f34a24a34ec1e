import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapeJsonForTerminal, sanitizeForTerminal } from "../../../src/cli/events/sanitize.js";

const ESC = "\x1b";
const BEL = "\x07";
const ST = `${ESC}\\`;
/** Anything a terminal could interpret, except the newline and tab we keep. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

describe("sanitizeForTerminal", () => {
  it("returns plain text unchanged, keeping newlines, tabs and non-ASCII", () => {
    const s = "Paris: 18°C\n\tRegen → später 🌧\n";
    expect(sanitizeForTerminal(s)).toBe(s);
  });

  it("removes an OSC 8 hyperlink but keeps its visible text", () => {
    expect(sanitizeForTerminal(`see ${ESC}]8;;https://evil.example/${ST}this link${ESC}]8;;${ST} now`)).toBe("see this link now");
    expect(sanitizeForTerminal(`${ESC}]8;;https://evil.example/${BEL}x${ESC}]8;;${BEL}`)).toBe("x");
  });

  it("removes an OSC 52 clipboard write, BEL- or ST-terminated", () => {
    expect(sanitizeForTerminal(`a${ESC}]52;c;cm0gLXJmIH4=${BEL}b`)).toBe("ab");
    expect(sanitizeForTerminal(`a${ESC}]52;c;cm0gLXJmIH4=${ST}b`)).toBe("ab");
  });

  it("removes CSI sequences: colours, cursor moves, screen clears, private modes", () => {
    expect(sanitizeForTerminal(`${ESC}[31mred${ESC}[0m`)).toBe("red");
    expect(sanitizeForTerminal(`x${ESC}[2J${ESC}[H${ESC}[?1049h${ESC}[1;31;4my`)).toBe("xy");
    expect(sanitizeForTerminal(`${ESC}[38;2;255;0;0mrgb${ESC}[m`)).toBe("rgb");
  });

  it("removes C1 controls, including the 8-bit CSI \\x9b with its parameters", () => {
    expect(sanitizeForTerminal("a\x9b31mb\x9b0mc")).toBe("abc");
    expect(sanitizeForTerminal("a\x9d0;title\x9cb")).toBe("ab");
    expect(sanitizeForTerminal("a\x85\x8d\x9fb")).toBe("ab");
  });

  it("removes a bare ESC and two-character ESC sequences", () => {
    expect(sanitizeForTerminal(`a${ESC}`)).toBe("a");
    expect(sanitizeForTerminal(`a${ESC}cb`)).toBe("ab"); // RIS: full terminal reset
    expect(sanitizeForTerminal(`a${ESC}(Bb${ESC}7c`)).toBe("abc");
  });

  it("removes BEL, backspace, carriage return, DEL and other C0 controls", () => {
    expect(sanitizeForTerminal(`ding${BEL}\b\b\bX\r\x00\x7f\x1a!`)).toBe("dingX!");
    expect(sanitizeForTerminal("line one\r\nline two")).toBe("line one\nline two");
  });

  it("drops the introducer of an unterminated sequence, leaving its payload as inert text", () => {
    const out = sanitizeForTerminal(`x${ESC}]52;c;payload`);
    expect(out).not.toMatch(CONTROL);
    expect(out.startsWith("x")).toBe(true);
  });

  it("removes bidi override and isolate controls", () => {
    expect(sanitizeForTerminal("a\u202eb\u2066c\u2069")).toBe("abc");
  });

  it("never leaves a control character other than newline and tab (property)", () => {
    const piece = fc.oneof(
      fc.string(),
      fc.constantFrom(ESC, BEL, ST, "\x9b", "\x9c", "\x9d", "\x90", "[", "]", ";", "31m", "\r", "\n", "\t", "52;c;"),
      fc.integer({ min: 0, max: 0x9f }).map((c) => String.fromCharCode(c)),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        const out = sanitizeForTerminal(pieces.join(""));
        expect(out).not.toMatch(CONTROL);
        expect(sanitizeForTerminal(out)).toBe(out);
      }),
      { numRuns: 2000 },
    );
  });

  it("is safe to apply to stream chunks one at a time (a split sequence loses its ESC)", () => {
    const chunks = [`a${ESC}`, "]52;c;Zm9v", `${BEL}b`];
    expect(chunks.map(sanitizeForTerminal).join("")).not.toMatch(CONTROL);
  });
});

describe("escapeJsonForTerminal", () => {
  it("escapes C1, DEL and line separators inside JSON strings and keeps the JSON equal", () => {
    const value = { text: "a\x9b31mb\x7f\u2028c", n: 1 };
    const json = escapeJsonForTerminal(JSON.stringify(value));
    expect(json).not.toMatch(/[\x7f-\x9f\u2028\u2029]/);
    expect(json).toContain("\\u009b");
    expect(JSON.parse(json)).toEqual(value);
  });
});
