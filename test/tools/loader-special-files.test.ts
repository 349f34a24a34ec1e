/**
 * Tool and hook files that are not regular files are load problems named by what they are
 * (modules: src/tools/loader.ts `refuseNonRegularFile`, worded by src/regular-file.ts `fileKind`;
 * command manifests: read through `readRegularText`), never read, while every regular tool
 * beside them still loads.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCommandTool } from "../../src/tools/command-tool.js";
import { importModuleFile, loadToolFile, loadTools } from "../../src/tools/loader.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "yiem-loader-special-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const okTool = `import { defineTool, toolResult } from "yiem";
export default defineTool({
  name: "ok",
  label: "ok",
  description: "a regular tool",
  inputSchema: { type: "object", properties: {} },
  async execute() { return toolResult("ran ok"); },
});
`;

describe("tool files that are not regular files", () => {
  it("a FIFO, a link to a device and a link to a folder are problems naming what they are; the regular tool loads", async () => {
    const dir = join(root, "tools");
    await mkdir(dir);
    await writeFile(join(dir, "ok.ts"), okTool);
    execFileSync("mkfifo", [join(dir, "fifo.ts")]);
    await symlink("/dev/null", join(dir, "device.tool.yaml"));
    await mkdir(join(root, "elsewhere"));
    await symlink(join(root, "elsewhere"), join(dir, "folder.ts"));

    const { registry, problems } = await loadTools(dir);
    expect(registry.list().map((t) => t.name)).toEqual(["ok"]);
    const reasons = Object.fromEntries(problems.map((p) => [p.path, p.reason]));
    expect(reasons).toEqual({
      [join(dir, "device.tool.yaml")]: "not a regular file (a device)",
      [join(dir, "fifo.ts")]: "not a regular file (a FIFO)",
      [join(dir, "folder.ts")]: "not a regular file (a folder)",
    });
  });

  it("loadToolFile and importModuleFile (module hooks) refuse a FIFO without opening it", async () => {
    const fifo = join(root, "hook.ts");
    execFileSync("mkfifo", [fifo]);
    await expect(loadToolFile(fifo)).rejects.toThrow("not a regular file (a FIFO)");
    await expect(importModuleFile(fifo)).rejects.toThrow("not a regular file (a FIFO)");
  });

  it("a command manifest that is a FIFO or a device is refused by loadCommandTool itself, without waiting", async () => {
    const fifo = join(root, "pipe.tool.yaml");
    execFileSync("mkfifo", [fifo]);
    await expect(loadToolFile(fifo)).rejects.toThrow(/^not a regular file \(a FIFO\)$/);
    await expect(loadCommandTool(fifo)).rejects.toThrow(/^not a regular file \(a FIFO\)$/);
    await expect(loadCommandTool("/dev/zero")).rejects.toThrow(/^not a regular file \(a device\)$/);
    await expect(loadCommandTool(join(root, "missing.tool.yaml"))).rejects.toThrow(/ENOENT: no such file or directory, open /);
  });
});
