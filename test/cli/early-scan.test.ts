/**
 * The command lines that start the check pass's worker before the CLI loads
 * (src/cli/early-scan.ts): only a plain `yiem batch INPUT …`, and never a guess that could be
 * another file. The worker itself, started from the built start bundle, is tested in
 * test/e2e/batch-split-check.test.ts.
 */
import { describe, expect, it } from "vitest";
import { earlyScanInput, startEarlyRangeScans, takeEarlyRangeScans } from "../../src/cli/early-scan.js";

describe("earlyScanInput", () => {
  it("finds the input of a plain batch line, wherever its flags are", () => {
    expect(earlyScanInput(["batch", "in.jsonl", "-o", "out.jsonl"])).toBe("in.jsonl");
    expect(earlyScanInput(["batch", "-c", "spec.yaml", "in.jsonl", "-o", "out.jsonl", "--events", "none"])).toBe("in.jsonl");
    expect(earlyScanInput(["-c", "spec.yaml", "batch", "-j", "16", "--skip-bad-lines", "in.jsonl"])).toBe("in.jsonl");
    expect(earlyScanInput(["batch", "--strict", "in.jsonl", "--prompt-template=@t.txt", "--debug"])).toBe("in.jsonl");
    expect(earlyScanInput(["batch", "--no-skip-bad-lines", "in.jsonl", "--rate", "60"])).toBe("in.jsonl");
  });

  it("starts nothing for a line whose check is not the default one, or whose input it cannot tell", () => {
    for (const args of [
      ["batch", "in.jsonl", "--resume", "-o", "out.jsonl"],
      ["batch", "in.jsonl", "--shard", "1/4"],
      ["batch", "in.jsonl", "--shard=auto"],
      ["batch", "in.jsonl", "--no-check"],
      ["batch", "in.jsonl", "--check", "false"],
      ["batch", "in.jsonl", "--check=false"],
      ["batch", "in.jsonl", "--full-check"],
      ["batch", "in.jsonl", "--no-full-check"],
      ["batch", "in.jsonl", "--help"],
      ["batch", "-h", "in.jsonl"],
      ["--resume", "batch", "in.jsonl"],
      ["batch", "-", "-o", "out.jsonl"], // stdin
      ["batch", "merge", "a.jsonl", "b.jsonl", "-o", "all.jsonl"],
      ["batch", "a.jsonl", "b.jsonl"], // two inputs: yargs will refuse the line
      ["batch", "--unknown-switch", "in.jsonl"], // the word after a flag not known as a boolean is its value
      ["batch", "-o", "out.jsonl"], // no input
      ["batch", "in.jsonl", "--", "x"],
      ["run", "in.jsonl"],
      ["tools", "list"],
      [],
    ]) expect(earlyScanInput(args), args.join(" ")).toBeUndefined();
  });

  it("reads `batch` as the command word only where yiem does (a global option's value is not it)", () => {
    expect(earlyScanInput(["-c", "batch", "run", "in.jsonl"])).toBeUndefined();
    expect(earlyScanInput(["--tool-dir", "tools", "batch", "in.jsonl"])).toBe("in.jsonl");
  });
});

describe("startEarlyRangeScans / takeEarlyRangeScans", () => {
  it("never throws and starts nothing for a file that is missing, small, or where no worker file exists", () => {
    expect(() => startEarlyRangeScans(["batch", "/nonexistent/in.jsonl"])).not.toThrow();
    // The sources run as TypeScript: there is no scan-worker file next to them, so nothing starts.
    startEarlyRangeScans(["batch", "package.json"]);
    expect(takeEarlyRangeScans(undefined)).toBeUndefined();
  });
});
