/** The spec cache: warm loads skip parsing and validation, yet errors keep their file:line. */
import { readdirSync, rmSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadSpec } from "../../src/config/load.js";
import { tempProject, type TempProject } from "../fixtures/config/temp-project.js";

let cacheDir: string;
let project: TempProject;
const saved = process.env.YIEM_CACHE_DIR;

beforeEach(() => {
  cacheDir = mkdtempSync(path.join(tmpdir(), "yiem-spec-cache-"));
  process.env.YIEM_CACHE_DIR = cacheDir;
});
afterEach(() => {
  if (saved === undefined) delete process.env.YIEM_CACHE_DIR;
  else process.env.YIEM_CACHE_DIR = saved;
  rmSync(cacheDir, { recursive: true, force: true });
  project?.remove();
});

// The cache is the caller's: the YIEM_CACHE_DIR of the env loadSpec is given (src/cache-dir.ts).
const load = (env: NodeJS.ProcessEnv = {}) => loadSpec({ cwd: project.root, env: { YIEM_CACHE_DIR: cacheDir, ...env }, overrides: {}, requireModel: false });

describe("spec cache", () => {
  it("stores the parse and the validity, and gives the same spec warm as cold", async () => {
    project = tempProject({ "agent.config.yaml": "model: m\ntoolDirs: [tools]\nlimits: { maxTurns: 4 }\n", "tools/": "" });
    const cold = await load();
    const files = readdirSync(path.join(cacheDir, "specs"));
    expect(files.some((f) => f.endsWith(".json"))).toBe(true);
    expect(files.some((f) => f.endsWith(".ok"))).toBe(true);
    const warm = await load();
    expect(warm).toEqual(cold);
  });

  it("an error found on a cached spec still names its line", async () => {
    project = tempProject({ "agent.config.yaml": "model: m\ntoolDirs:\n  - tools\n", "tools/": "" });
    await load();
    rmSync(project.path("tools"), { recursive: true });
    await expect(load()).rejects.toThrow(/^agent\.config\.yaml:3: toolDirs\[0\]: tool folder "tools" not found/);
  });

  it("validity is keyed by the interpolated value: a changed variable is checked again", async () => {
    project = tempProject({ "agent.config.yaml": "model: m\ntoolExecution: ${MODE}\n" });
    expect((await load({ MODE: "parallel" })).toolExecution).toBe("parallel");
    await expect(load({ MODE: "sideways" })).rejects.toThrow(/^agent\.config\.yaml:2: .*toolExecution/);
  });

  it("an edited file is parsed again", async () => {
    project = tempProject({ "agent.config.yaml": "model: m\nname: first\n" });
    expect((await load()).name).toBe("first");
    project.write("agent.config.yaml", "model: m\nname: second\n");
    expect((await load()).name).toBe("second");
  });

  it("a value JSON would change (a YAML timestamp, .inf) is never cached: warm and cold give the same error", async () => {
    project = tempProject({ "agent.config.yaml": "model: m\nname: !!timestamp 2024-05-01\n" });
    for (let run = 0; run < 2; run++) await expect(load()).rejects.toThrow('agent.config.yaml:2: "name" must be a non-empty string (got an object)');
    // A valid spec of the same JSON (the timestamp's ISO string) is cached valid; the timestamp still is not taken for it.
    project.write("agent.config.yaml", 'model: m\nname: "2024-05-01T00:00:00.000Z"\n');
    expect((await load()).name).toBe("2024-05-01T00:00:00.000Z");
    project.write("agent.config.yaml", "model: m\nname: !!timestamp 2024-05-01\n");
    await expect(load()).rejects.toThrow('"name" must be a non-empty string (got an object)');
    project.write("agent.config.yaml", "model: m\nlimits: { maxCostUsd: .inf }\n");
    const first = await load().then((spec) => spec.limits.maxCostUsd, (error: Error) => error.message);
    expect(await load().then((spec) => spec.limits.maxCostUsd, (error: Error) => error.message)).toEqual(first);
  });
});
