/**
 * The copy-on-write event redactor (src/redact.ts) must give exactly what the copying walk
 * it replaced gave (compared as JSON, the only way events leave the process, and as plain data),
 * never change its input, and pass plain values with nothing to hide through uncopied.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRedactor } from "../../src/redact.js";

const SECRETS = ["s3cr3t-value", "tok"];

/** The previous implementation: a full copy of every object and array. */
function referenceRedactor(secrets: string[]) {
  const list = [...new Set(secrets.filter((s) => s !== ""))].sort((a, b) => b.length - a.length);
  const text = (s: string) => {
    let out = s;
    for (const secret of list) if (out.includes(secret)) out = out.split(secret).join("***");
    return out;
  };
  const ancestors: object[] = [];
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return text(value);
    if (value === null || typeof value !== "object") return value;
    if (typeof (value as { toJSON?: unknown }).toJSON === "function") return walk((value as { toJSON(): unknown }).toJSON());
    if (ancestors.includes(value)) return "[Circular]";
    ancestors.push(value);
    try {
      if (Array.isArray(value)) return value.map(walk);
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item)]));
    } finally {
      ancestors.pop();
    }
  };
  return (value: unknown) => walk(value);
}

const redact = createRedactor(SECRETS);
const reference = referenceRedactor(SECRETS);

describe("createRedactor (copy on write)", () => {
  it("returns an event with no secret in it as it is, without copying", () => {
    const event = { type: "toolExecutionEnd", result: { content: [{ type: "text", text: "ok" }] }, args: { list: [1, "two", null] } };
    expect(redact(event)).toBe(event);
  });

  it("copies only the path to a secret and never changes its input", () => {
    const untouched = { deep: ["keep"] };
    const event = { a: untouched, b: { text: "my s3cr3t-value here", n: 1 }, c: ["tok", "x"] };
    const before = JSON.stringify(event);
    const out = redact(event);
    expect(JSON.stringify(event)).toBe(before);
    expect(out).toEqual({ a: { deep: ["keep"] }, b: { text: "my *** here", n: 1 }, c: ["***", "x"] });
    expect(out.a).toBe(untouched);
    expect(out.b).not.toBe(event.b);
  });

  it("handles toJSON, cycles, class instances, Maps, Errors and __proto__ keys like the copying walk", () => {
    class Box {
      constructor(readonly inner: string) {}
    }
    const cyclic: Record<string, unknown> = { name: "tok" };
    cyclic.self = cyclic;
    const values: unknown[] = [
      { when: new Date(0), box: new Box("s3cr3t-value"), map: new Map([["a", 1]]), error: new Error("tok") },
      cyclic,
      JSON.parse('{"__proto__": {"polluted": "tok"}, "x": "tok"}'),
      JSON.parse('{"__proto__": {"fine": 1}}'),
      Object.assign(Object.create(null), { a: "tok" }),
      Object.assign(Object.create(null), { a: "fine" }),
      [1, , "tok"], // eslint-disable-line no-sparse-arrays
      new Uint8Array([1, 2]),
    ];
    for (const value of values) {
      const out = redact(value);
      expect(JSON.stringify(out)).toBe(JSON.stringify(reference(value)));
      expect(out).toEqual(reference(value));
    }
    const polluted = redact(JSON.parse('{"__proto__": {"polluted": "tok"}, "x": "tok"}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(polluted)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("property: any JSON-like value redacts exactly like the copying walk", () => {
    const withSecrets = fc.oneof(fc.string(), fc.constantFrom("tok", "a s3cr3t-value b", "tokentok", "s3cr3t-valu"));
    const value = fc.letrec((tie) => ({
      leaf: fc.oneof(withSecrets, fc.integer(), fc.boolean(), fc.constant(null), fc.double()),
      node: fc.oneof({ depthSize: "small" }, tie("leaf"), fc.array(tie("node"), { maxLength: 4 }), fc.dictionary(withSecrets, tie("node"), { maxKeys: 4 })),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        const before = JSON.stringify(v);
        const out = redact(v);
        expect(JSON.stringify(out)).toBe(JSON.stringify(reference(v)));
        expect(JSON.stringify(v)).toBe(before);
      }),
      { numRuns: 500 },
    );
  });
});
