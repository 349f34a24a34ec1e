/** Bad specs, `yiem config` and `yiem init`, through the real binary. */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertEventStream } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "yiem-cli-spec-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function project(name: string, spec: string, extra: Record<string, string> = {}): Promise<string> {
  const dir = join(root, name);
  await mkdir(join(dir, "tools"), { recursive: true });
  await writeFile(join(dir, "package.json"), "{}");
  await writeFile(join(dir, "agent.config.yaml"), spec);
  for (const [file, text] of Object.entries(extra)) await writeFile(join(dir, file), text);
  return dir;
}

const GOOD = "model: replay:demo.jsonl\ntoolDirs: [tools]\n";

describe("bad specs exit 2 with one message naming the file, the line and the key", () => {
  const cases: Array<[string, string, RegExp[]]> = [
    ["yaml-syntax", "model: gpt-4o-mini\nlimits: { maxTurns: 3\n", [/agent\.config\.yaml:\d+/]],
    ["unknown-key", "model: gpt-4o-mini\ntoolDir: [tools]\n", [/agent\.config\.yaml:2/, /"toolDir"/]],
    ["wrong-type", "model: gpt-4o-mini\nlimits:\n  maxTurns: ten\n", [/agent\.config\.yaml:3/, /limits\.maxTurns/, /integer/]],
    ["missing-tool-dir", "model: gpt-4o-mini\ntoolDirs: [nowhere]\n", [/nowhere/, /toolDirs/]],
    ["unknown-scheme", "model: foo:./model.bin\n", [/agent\.config\.yaml/, /foo/]],
    ["missing-replay", "model: replay:missing.jsonl\n", [/missing\.jsonl/]],
  ];
  for (const [name, spec, patterns] of cases) {
    it(name, async () => {
      const dir = await project(name, spec);
      const r = await runCli(["run", "hello"], { cwd: dir, env: { OPENAI_API_KEY: "sk-present" } });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      assertEventStream(r.events, { requireStart: false });
      const message = String(r.events.at(-1)!.error);
      for (const pattern of patterns) expect(message).toMatch(pattern);
      expect(message).not.toMatch(/\n\s+at /); // no stack trace
    });
  }

  it("a missing API key for a remote model names the variable", async () => {
    const dir = await project("no-key", "model:\n  name: gpt-4o-mini\n  apiKeyEnv: MY_OPENAI_KEY\n");
    const r = await runCli(["run", "--events", "pretty", "hello"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("MY_OPENAI_KEY");
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("--debug shows the stack trace", async () => {
    const dir = await project("debug", "model: gpt-4o-mini\ntoolDir: [tools]\n");
    const r = await runCli(["run", "--events", "pretty", "--debug", "hello"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\n\s+at /);
  });

  it("an unset ${VAR} is an error naming the variable", async () => {
    const dir = await project("unset-var", "model: ${NOT_SET_ANYWHERE}\n");
    const r = await runCli(["config"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("NOT_SET_ANYWHERE");
  });
});

describe("yiem config", () => {
  it("prints the resolved spec with sources and the key redacted", async () => {
    const dir = await project("config", "model:\n  name: ${M:-gpt-4o-mini}\n  apiKeyEnv: CFG_KEY\ntoolDirs: [tools]\nlimits: { maxTurns: 7 }\n");
    const r = await runCli(["config", "--json", "--tool-dir", "tools"], { cwd: dir, env: { CFG_KEY: "sk-very-secret-123", YIEM_MODEL: "env-model" } });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("sk-very-secret-123");
    const view = JSON.parse(r.stdout);
    expect(view.model.name).toBe("env-model");
    expect(view.limits.maxTurns).toBe(7);
    expect(view.sources).toMatchObject({ "model.name": "env", "limits.maxTurns": "spec", toolDirs: "flag", "limits.toolTimeoutMs": "default" });
    expect(view.configPath).toBe(join(dir, "agent.config.yaml"));
    const yaml = await runCli(["config"], { cwd: dir, env: { CFG_KEY: "sk-very-secret-123" } });
    expect(yaml.code).toBe(0);
    expect(yaml.stdout).toContain("maxTurns: 7");
    expect(yaml.stdout).not.toContain("sk-very-secret-123");
  });

  it("-c names the spec file", async () => {
    const dir = await project("dash-c", GOOD, { "other.yaml": "model: replay:x.jsonl\nname: other\n", "x.jsonl": "" });
    const r = await runCli(["config", "--json", "-c", "other.yaml"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).name).toBe("other");
  });
});

describe("yiem init", () => {
  it("writes a commented spec and an example tool that work, and refuses to overwrite", async () => {
    const dir = join(root, "init");
    await mkdir(dir);
    await writeFile(join(dir, "package.json"), "{}");
    const first = await runCli(["init"], { cwd: dir });
    expect(first.code).toBe(0);
    const spec = await readFile(join(dir, "agent.config.yaml"), "utf8");
    expect(spec).toMatch(/^#/m);
    const config = await runCli(["config", "--json"], { cwd: dir });
    expect(config.code).toBe(0);
    const tools = await runCli(["tools", "call", "countWords", "--args", '{"text":"one two three"}'], { cwd: dir });
    expect(tools.code).toBe(0);
    expect(tools.stdout).toBe("3 words\n");
    const again = await runCli(["init"], { cwd: dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("overwrite");
    expect(await readFile(join(dir, "agent.config.yaml"), "utf8")).toBe(spec);
  });
});

describe("--help and --version", () => {
  it("every command has --help", async () => {
    for (const args of [["--help"], ["run", "--help"], ["config", "--help"], ["init", "--help"], ["tools", "--help"], ["tools", "call", "--help"], ["tools", "new", "--help"]]) {
      const r = await runCli(args);
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout).toContain("yiem");
    }
  });

  it("--version prints the package version", async () => {
    const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8"));
    const r = await runCli(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${pkg.version}\n`);
  });
});
