/**
 * Knowing whether Node built process.stdout / process.stderr without building them
 * (src/channels/process-streams.ts), in a process of its own (the wrapper is process-wide),
 * through the loader bundle that bin/yiem.js uses; and the guard, installed before the streams
 * exist, still captures what code writes to them once they are built.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { baseEnv, repoRoot, yiemBin } from "../support/cli.js";

const start = JSON.stringify(join(repoRoot, "dist", "bundle", "start.cjs"));
const run = (script: string) => spawnSync(process.execPath, ["-e", script], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

describe("process streams", () => {
  it("a stream is null until built, then the stream; onStreamBuilt runs once, when it is built", () => {
    const r = run(`
      const s = require(${start});
      s.trackProcessStreams();
      const seen = [];
      s.onStreamBuilt("stdout", (stream) => seen.push(stream === process.stdout));
      const before = [s.builtStream("stdout"), s.builtStream("stderr")];
      const modulesBefore = process.moduleLoadList.includes("NativeModule net");
      process.stdout.write("");
      process.stdout;
      require("node:fs").writeSync(2, JSON.stringify({ before, modulesBefore, after: s.builtStream("stdout") === process.stdout, stderr: s.builtStream("stderr"), seen }));
    `);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stderr)).toEqual({ before: [null, null], modulesBefore: false, after: true, stderr: null, seen: [true] });
  });

  it("the guard, installed before Node built either stream, still keeps a tool's writes off stdout and stderr (real binary, pipes)", () => {
    const dir = mkdtempSync(join(tmpdir(), "yiem-process-streams-"));
    try {
      mkdirSync(join(dir, "tools"));
      writeFileSync(
        join(dir, "tools", "loud.mjs"),
        'console.log("LEAK-1"); process.stdout.write("LEAK-2\\n"); console.error("LEAK-3"); process.stderr.write("LEAK-4\\n");\n' +
          'export default { name: "loud", label: "Loud", description: "writes at load", inputSchema: { type: "object" }, execute: async () => "ok" };\n',
      );
      for (const args of [["tools", "list"], ["tools", "list", "--json"]]) {
        const r = spawnSync(process.execPath, [yiemBin, ...args, "--tool-dir", join(dir, "tools")], { cwd: dir, env: baseEnv({}), encoding: "utf8" });
        expect(r.status, r.stderr).toBe(0);
        expect(r.stdout).toMatch(/loud/);
        expect(r.stdout).not.toMatch(/LEAK/);
        // What the tool wrote is reported as yiem's own lines (the guard's), never raw.
        for (const line of r.stderr.trim().split("\n").filter(Boolean)) expect(line).toMatch(/^yiem: tool or hook code wrote to std(out|err): LEAK-\d$|^\{/);
        expect(r.stderr.match(/LEAK-\d/g)?.sort()).toEqual(["LEAK-1", "LEAK-2", "LEAK-3", "LEAK-4"]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
