/**
 * FetchHeaders (src/provider/http/headers.ts) against Node's own `Headers`: any sequence of
 * appends, sets and deletes leaves both with the same entries, values and cookies; what one
 * refuses the other refuses.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FetchHeaders, isHeadersLike } from "../../src/provider/http/headers.js";

const NAMES = ["content-type", "Content-Type", "X-Multi", "x-multi", "set-cookie", "Set-Cookie", "authorization", "a", "Z-last"];
const VALUES = ["", "v", " padded\t", "a, b", "ü", "x=1; Path=/", "\tboth \t"];

type Op = { kind: "append" | "set" | "delete"; name: string; value: string };
const op = fc.record({
  kind: fc.constantFrom("append" as const, "set" as const, "delete" as const),
  name: fc.constantFrom(...NAMES),
  value: fc.constantFrom(...VALUES),
});

function apply(headers: Headers | FetchHeaders, ops: Op[]): void {
  for (const { kind, name, value } of ops) {
    if (kind === "delete") headers.delete(name);
    else headers[kind](name, value);
  }
}

function state(headers: Headers | FetchHeaders) {
  return {
    entries: [...headers.entries()],
    keys: [...headers.keys()],
    values: [...headers.values()],
    gets: NAMES.map((name) => [headers.get(name), headers.has(name)]),
    cookies: headers.getSetCookie(),
  };
}

describe("FetchHeaders behaves as Headers", () => {
  it("the same state after any sequence of operations (property)", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
        const theirs = new Headers();
        const ours = new FetchHeaders();
        apply(theirs, ops);
        apply(ours, ops);
        expect(state(ours)).toEqual(state(theirs));
      }),
      { numRuns: 500 },
    );
  });

  it("takes a record, pairs, or other headers, as Headers does", () => {
    const record = { "Content-Type": "application/json", "x-a": " 1 " };
    const pairs: [string, string][] = [["x-b", "1"], ["X-B", "2"], ["set-cookie", "a=1"], ["set-cookie", "b=2"]];
    expect(state(new FetchHeaders(record))).toEqual(state(new Headers(record)));
    expect(state(new FetchHeaders(pairs))).toEqual(state(new Headers(pairs)));
    expect(state(new FetchHeaders(new Headers(pairs)))).toEqual(state(new Headers(pairs)));
    expect(state(new FetchHeaders(new FetchHeaders(pairs)))).toEqual(state(new Headers(pairs)));
  });

  it("refuses what Headers refuses: a name that is no token, a value with CR, LF or NUL, a pair of three", () => {
    for (const [name, value] of [["bad name", "v"], ["", "v"], ["ü", "v"], ["x", "a\r\nb"], ["x", "a\nb"], ["x", "a\0b"], ["x", "ā"], ["x", "✓"]]) {
      expect(() => new Headers().append(name, value)).toThrow(TypeError);
      expect(() => new FetchHeaders().append(name, value)).toThrow(TypeError);
    }
    expect(() => new Headers([["a", "b", "c"]] as unknown as [string, string][])).toThrow(TypeError);
    expect(() => new FetchHeaders([["a", "b", "c"]] as unknown as [string, string][])).toThrow(TypeError);
    expect(() => new Headers(["ab"] as unknown as [string, string][])).toThrow(TypeError);
    expect(() => new FetchHeaders(["ab"] as unknown as [string, string][])).toThrow(TypeError);
  });

  it("forEach gives value, name and the headers; it reads as Headers to duck typing", () => {
    const headers = new FetchHeaders([["b", "2"], ["a", "1"]]);
    const seen: string[] = [];
    headers.forEach((value, name, self) => seen.push(`${name}=${value}:${self === headers}`));
    expect(seen).toEqual(["a=1:true", "b=2:true"]);
    expect(Object.prototype.toString.call(headers)).toBe("[object Headers]");
    expect(isHeadersLike(headers)).toBe(true);
    expect(isHeadersLike(new Headers())).toBe(true);
    expect(isHeadersLike({ get: 1 })).toBe(false);
    expect(isHeadersLike(null)).toBe(false);
  });
});
