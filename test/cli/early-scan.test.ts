/**
 * The command lines that start the check pass's worker before the CLI loads
 * (src/cli/early-scan.ts): only a plain `yiem batch INPUT …`, and never a guess that could be
 * another file. The worker itself, started from the built start bundle, is tested in
 * test/e2e/batch-split-check.test.ts.
 */
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rangeRequests } from "../../src/batch/range-plan.js";
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
  it("never throws for an input that is missing or small", () => {
    expect(() => startEarlyRangeScans(["batch", "/nonexistent/in.jsonl"])).not.toThrow();
    startEarlyRangeScans(["batch", "package.json"]);
    expect(takeEarlyRangeScans(join(process.cwd(), "package.json"))).toBeUndefined();
  });

  it("starts nothing where there is no worker file (the sources run as TypeScript), for an input it would split", () => {
    // A sparse 200 MiB file with a line end every 8 MiB: the plan has one range, wherever its cut.
    const dir = mkdtempSync(join(tmpdir(), "yiem-early-"));
    try {
      const input = join(dir, "in.jsonl");
      const size = 200 * 1024 * 1024;
      const fd = openSync(input, "w");
      for (let at = 8 * 1024 * 1024; at < size; at += 8 * 1024 * 1024) writeSync(fd, "\n", at);
      ftruncateSync(fd, size);
      closeSync(fd);
      expect(rangeRequests(input)).toHaveLength(1);
      startEarlyRangeScans(["batch", "in.jsonl", "-o", "out.jsonl"], dir);
      expect(takeEarlyRangeScans(input)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
