/**
 * The lists of flags that take no value, which yiem reads a command line by before yargs runs
 * (src/cli/command-word.ts: the stdin word `-` of run and batch, src/cli/main.ts; the input
 * that starts batch's check worker early, src/cli/early-scan.ts), hold exactly the booleans
 * yargs is given for those commands (src/cli/command-line.ts, src/cli/batch-flags.ts): a
 * boolean missing from a list made the word after it read as its value (`--no-spec-mcp -` lost
 * stdin).
 */
import { describe, expect, it } from "vitest";
import { BATCH_BOOLEAN_FLAGS, RUN_BOOLEAN_FLAGS, takesValue } from "../../src/cli/command-word.js";
import { runCliInProcess } from "../support/cli-in-process.js";

/**
 * Every flag `--help` of `command` shows as [boolean], as the user types it (`--name`, `-x`): yargs'
 * own definition of the command, read from its help (an option's entry runs from its line to the
 * next option's, its type at the end).
 */
async function helpBooleans(command: string): Promise<Set<string>> {
  const help = await runCliInProcess([command, "--help"]);
  expect(help.code, help.stderr).toBe(0);
  const names = new Set<string>();
  let entry: { names: string[]; text: string } | undefined;
  const finish = () => {
    if (entry && entry.text.includes("[boolean]")) for (const name of entry.names) names.add(name);
  };
  for (const line of help.stdout.split("\n")) {
    const option = /^\s+(?:(-\w), )?(--[\w-]+)\s/.exec(line);
    if (option) {
      finish();
      entry = { names: [option[1], option[2]].filter((name): name is string => name !== undefined), text: line };
    } else if (entry && /^\s{10,}\S/.test(line)) entry.text += line;
    else {
      finish();
      entry = undefined;
    }
  }
  finish();
  return names;
}

/** The positive flags of a list (its `--no-` forms are generated from them). */
const positives = (flags: ReadonlySet<string>) => new Set([...flags].filter((flag) => !flag.startsWith("--no-")));

describe("the boolean flag lists read before yargs", () => {
  it("batch's: exactly yargs' booleans of batch", async () => {
    const booleans = await helpBooleans("batch");
    expect(booleans.size).toBeGreaterThan(5);
    expect(positives(BATCH_BOOLEAN_FLAGS)).toEqual(booleans);
  });

  it("run's: exactly yargs' booleans of run", async () => {
    const booleans = await helpBooleans("run");
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
