/**
 * A command tool's `env` is interpolated by the spec's one rule (src/interpolate.ts): an unset
 * `${VAR}` is an error naming it, found when the tool loads; a lone `${VAR}` unset is left out.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadCommandTool } from "../../src/tools/command-tool.js";
import { interpolateEnvMap, InterpolationError } from "../../src/interpolate.js";

const dir = mkdtempSync(join(tmpdir(), "yiem-env-"));
function manifest(name: string, env: Record<string, string>): string {
  const file = join(dir, `${name}.tool.json`);
  writeFileSync(file, JSON.stringify({ name, label: name, description: name, inputSchema: { type: "object" }, command: [process.execPath, "-e", "0"], env }));
  return file;
}

describe("command tool env interpolation", () => {
  it("an unset ${VAR} inside a value is a load error naming the key and the variable", async () => {
    delete process.env.YIEM_SURELY_UNSET;
    await expect(loadCommandTool(manifest("inside", { GREETING: "hi ${YIEM_SURELY_UNSET}" }))).rejects.toThrow(
      /"env\.GREETING": environment variable YIEM_SURELY_UNSET is not set \(use \$\{YIEM_SURELY_UNSET:-default\} for a default\)/,
    );
  });

  it("a bad placeholder is a load error too, as in a spec", async () => {
    await expect(loadCommandTool(manifest("bad", { X: "${1X}" }))).rejects.toThrow(/"env\.X": bad placeholder "\$\{1X\}"/);
  });

  it("a lone unset ${VAR} is left out; $${ is a literal; defaults apply", () => {
    expect(interpolateEnvMap({ PASS: "${YIEM_SURELY_UNSET}", LIT: "$${HOME}", DEF: "${YIEM_SURELY_UNSET:-d}" }, {})).toEqual({ LIT: "${HOME}", DEF: "d" });
    expect(() => interpolateEnvMap({ A: "x${YIEM_SURELY_UNSET}" }, {})).toThrow(InterpolationError);
  });
});
