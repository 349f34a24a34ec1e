/**
 * The lists of flags that take no value, which yiem reads a command line by before yargs runs
 * (src/cli/command-word.ts: the stdin word `-` of run and batch, src/cli/main.ts; the input
 * that starts batch's check worker early, src/cli/early-scan.ts), hold exactly the booleans
 * yargs is given for those commands (src/cli/command-line.ts, src/cli/batch-flags.ts): a
 * boolean missing from a list made the word after it read as its value (`--no-spec-mcp -` lost
 * stdin).
 */
import { PassThrough } from "node:stream";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import type { YargsOptions } from "../../src/cli/usage-errors.js";
import { BATCH_BOOLEAN_FLAGS, RUN_BOOLEAN_FLAGS, takesValue } from "../../src/cli/command-word.js";

/** The options yargs validated each parse with (its `.check` hands them to missingFlagValue). */
const seen: Array<YargsOptions & { boolean: string[] }> = [];
vi.mock(import("../../src/cli/usage-errors.js"), async (importOriginal) => {
  const actual = await importOriginal();
  return {
    ...actual,
    missingFlagValue: (args: string[], options: YargsOptions) => {
      seen.push(options as YargsOptions & { boolean: string[] });
      return actual.missingFlagValue(args, options);
    },
  };
});

const cacheDir = mkdtempSync(join(tmpdir(), "yiem-boolean-flags-"));
const previousCacheDir = process.env.YIEM_CACHE_DIR;
process.env.YIEM_CACHE_DIR = cacheDir;
afterAll(() => {
  if (previousCacheDir === undefined) delete process.env.YIEM_CACHE_DIR;
  else process.env.YIEM_CACHE_DIR = previousCacheDir;
  rmSync(cacheDir, { recursive: true, force: true });
});

/** Every flag yargs reads as a boolean on `args`'s command, as the user types it (`--name`, `-x`). */
async function yargsBooleans(args: string[]): Promise<Set<string>> {
  const { parseWithYargs } = await import("../../src/cli/command-line.js");
  const io = { isTTY: { stdin: false, stdout: false, stderr: false }, stdout: new PassThrough(), stderr: new PassThrough() } as unknown as CliIo;
  seen.length = 0;
  const parsed = await parseWithYargs(args, args, io);
  expect(parsed.kind, JSON.stringify(parsed)).toBe("command");
  const options = seen[seen.length - 1];
  expect(options, "yargs validated the line").toBeDefined();
  const names = new Set<string>();
  for (const key of options!.boolean) for (const name of [key, ...(options!.alias[key] ?? [])]) {
    // yargs adds camelCase aliases of kebab names: a user types the kebab one.
    if (/[A-Z]/.test(name) && name.length > 1) continue;
    names.add(name.length === 1 ? `-${name}` : `--${name}`);
  }
  return names;
}

/** The positive flags of a list (its `--no-` forms are generated from them). */
const positives = (flags: ReadonlySet<string>) => new Set([...flags].filter((flag) => !flag.startsWith("--no-")));

describe("the boolean flag lists read before yargs", () => {
  it("batch's: exactly yargs' booleans of batch", async () => {
    const booleans = await yargsBooleans(["batch", `in-${process.pid}.jsonl`, "-o", "out.jsonl"]);
    expect(booleans.size).toBeGreaterThan(5);
    expect(positives(BATCH_BOOLEAN_FLAGS)).toEqual(booleans);
  });

  it("run's: exactly yargs' booleans of run", async () => {
    const booleans = await yargsBooleans(["run", `hello ${process.pid}`]);
    expect(booleans.size).toBeGreaterThan(5);
    expect(positives(RUN_BOOLEAN_FLAGS)).toEqual(booleans);
  });

  it("each list has the --no- form of every long flag", () => {
    for (const list of [BATCH_BOOLEAN_FLAGS, RUN_BOOLEAN_FLAGS]) for (const flag of positives(list)) if (flag.startsWith("--")) expect(list.has(`--no-${flag.slice(2)}`), flag).toBe(true);
  });
});

describe("takesValue", () => {
  it("a flag not in the list takes the next word, unless it holds its value already", () => {
    expect(takesValue("-j", BATCH_BOOLEAN_FLAGS)).toBe(true);
    expect(takesValue("--concurrency", BATCH_BOOLEAN_FLAGS)).toBe(true);
    expect(takesValue("-j16", BATCH_BOOLEAN_FLAGS)).toBe(false);
    expect(takesValue("--concurrency=16", BATCH_BOOLEAN_FLAGS)).toBe(false);
    expect(takesValue("--no-spec-mcp", BATCH_BOOLEAN_FLAGS)).toBe(false);
    expect(takesValue("--skip-bad-lines", BATCH_BOOLEAN_FLAGS)).toBe(false);
    expect(takesValue("-", BATCH_BOOLEAN_FLAGS)).toBe(false);
    expect(takesValue("in.jsonl", BATCH_BOOLEAN_FLAGS)).toBe(false);
    expect(takesValue(undefined, BATCH_BOOLEAN_FLAGS)).toBe(false);
  });
});
