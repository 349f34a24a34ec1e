/**
 * The check pass where WebAssembly cannot run (src/batch/bulk-scan.ts createBulkScanner gives
 * undefined): every line is read one by one, with the same report and the same owners as with the
 * module, across several chunks, the 100,000-line cap and the caps at 0 and 1.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";

let dir: string | undefined;
afterAll(async () => {
  vi.unstubAllGlobals();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The reports (without their index) and some owners of `path` under each cap, with the modules as loaded now. */
async function checkAll(path: string): Promise<unknown[]> {
  const { checkInput } = await import("../../src/batch/check-pass.js");
  const out: unknown[] = [];
  for (const fullCheckLines of [100_000, 1, 0, 200_000]) {
    const { index, ...report } = await checkInput({ file: path, done: new Map(), prepare() {}, fullCheckLines });
    out.push({ report, owners: ["k1", "k99999", "k100001", "k200000", "c178", "97", "k2919", "nope"].map((id) => index.owner(id, 0)) });
  }
  return out;
}

describe("the check pass without WebAssembly", () => {
  it("gives the same reports and owners as with it", async () => {
    dir = await mkdtemp(join(tmpdir(), "yiem-no-wasm-"));
    const path = join(dir, "in.jsonl");
    const lines = Array.from({ length: 250_000 }, (_, i) => {
      const n = i + 1;
      if (n % 7919 === 0) return `{"id":"k${n - 5000}","prompt":"a repeat"}`;
      if (n % 10007 === 0) return `{"id":"k${n}","promt":"typo"}`;
      if (n % 12007 === 0) return "{broken";
      if (n % 97 === 0) return `plain ${n}`;
      if (n % 89 === 0) return `{"custom_id":"c${n}","method":"POST","url":"/v1/chat/completions","body":{"messages":[]}}`;
      return `{"id":"k${n}","prompt":"${"p".repeat(n % 60)}"}${n % 3 === 0 ? "\r" : ""}`;
    });
    await writeFile(path, `\ufeff${lines.join("\n")}`);
    const withModule = await checkAll(path);
    const { createBulkScanner } = await import("../../src/batch/bulk-scan.js");
    expect(createBulkScanner()).toBeDefined();

    // The scanner looks the API up when it is made: with none, every line is read one by one.
    vi.stubGlobal("WebAssembly", undefined);
    let withoutModule: unknown[];
    try {
      expect(createBulkScanner()).toBeUndefined();
      withoutModule = await checkAll(path);
    } finally {
      vi.unstubAllGlobals();
    }
    expect(createBulkScanner()).toBeDefined();
    expect(withoutModule).toEqual(withModule);
    expect((withModule[0] as { report: { problemCount: number; idsOnlyFrom: number } }).report).toMatchObject({ idsOnlyFrom: 100_001 });
    expect((withModule[0] as { report: { problemCount: number } }).report.problemCount).toBeGreaterThan(30);
  });
});
