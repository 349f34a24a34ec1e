import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadSpec } from "../../src/config/load.js";
import type { LoadSpecOptions } from "../../src/config/types.js";
import { tempProject, type TempProject } from "../fixtures/config/temp-project.js";

const KEY_ENV = { OPENAI_API_KEY: "sk-test-0123456789" };
const projects: TempProject[] = [];
function project(files: Record<string, string> = {}): TempProject {
  const created = tempProject(files);
  projects.push(created);
  return created;
}
afterEach(() => {
  for (const created of projects.splice(0)) created.remove();
});

function load(cwd: string, more: Partial<LoadSpecOptions> = {}) {
  return loadSpec({ cwd, env: { ...KEY_ENV }, overrides: {}, ...more });
}

describe("discovery", () => {
  const places: [string, string][] = [
    ["agent.config.yaml", "model: from-yaml\n"],
    ["agent.config.yml", "model: from-yml\n"],
    ["agent.config.json", '{"model": "from-json"}'],
    [".yiemrc", "model: from-rc\n"],
    [".yiemrc.yaml", "model: from-rc-yaml\n"],
    [".yiemrc.json", '{"model": "from-rc-json"}'],
  ];
  for (const [file, content] of places) {
    it(`finds ${file} from a subfolder`, async () => {
      const p = project({ [file]: content, "src/deep/": "" });
      const spec = await load(p.path("src/deep"));
      expect(spec.configPath).toBe(p.path(file));
      expect(spec.model.name).toMatch(/^from-/);
      expect(spec.baseDir).toBe(p.root);
    });
  }

  it("finds package.json#yiem", async () => {
    const p = project({ "package.json": JSON.stringify({ name: "x", yiem: { model: "from-package" } }), "a/": "" });
    const spec = await load(p.path("a"));
    expect(spec.configPath).toBe(p.path("package.json"));
    expect(spec.model.name).toBe("from-package");
  });

  it("prefers the places in order within a folder", async () => {
    const p = project({ "agent.config.yml": "model: second\n", ".yiemrc.json": '{"model":"later"}', "agent.config.yaml": "model: first\n" });
    expect((await load(p.root)).model.name).toBe("first");
  });

  it("prefers the nearest folder", async () => {
    const p = project({ "agent.config.yaml": "model: outer\n", "sub/.yiemrc": "model: inner\n" });
    expect((await load(p.path("sub"))).model.name).toBe("inner");
  });

  it("stops at the project root (the folder with package.json)", async () => {
    const p = project({ "agent.config.yaml": "model: outside\n", "inner/package.json": "{}", "inner/src/": "" });
    const spec = await load(p.path("inner/src"), { overrides: { model: "flag-model" } });
    expect(spec.configPath).toBeNull();
  });

  it("skips a package.json without yiem and uses defaults when nothing is found", async () => {
    const p = project({ "sub/": "" });
    const spec = await load(p.path("sub"), { overrides: { model: "m" } });
    expect(spec.configPath).toBeNull();
    expect(spec.baseDir).toBe(p.path("sub"));
    expect(spec.toolDirs).toEqual([]);
    expect(spec.writeToolDir).toBeNull();
    expect(spec.builtinTools).toEqual(["listTools"]);
    expect(spec.toolExecution).toBe("sequential");
    expect(spec.tools).toEqual({ allow: ["*"], deny: [] });
    expect(spec.limits).toEqual({
      maxTurns: 25, toolTimeoutMs: 120000, runTimeoutMs: 0, maxConcurrency: 8, maxTokens: 0, maxCostUsd: 0, loopDetection: 5, maxToolCallsPerResponse: 128,
    });
    expect(spec.model).toMatchObject({ name: "m", apiKeyEnv: "OPENAI_API_KEY", stream: "auto", maxRetries: 2, timeoutMs: 600000 });
    expect(spec.systemPrompt).toBe("");
    expect(spec.name).toBeNull();
    expect(spec.hooks).toEqual({});
  });

  it("counts an empty spec file as found", async () => {
    const p = project({ "agent.config.yaml": "# nothing yet\n" });
    const spec = await load(p.root, { overrides: { model: "m" } });
    expect(spec.configPath).toBe(p.path("agent.config.yaml"));
  });

  it("-c loads exactly that file, relative to cwd, and ignores discovery", async () => {
    const p = project({ "agent.config.yaml": "model: discovered\n", "alt/custom.yaml": "model: chosen\n", "work/": "" });
    const spec = await load(p.path("work"), { configPath: "../alt/custom.yaml" });
    expect(spec.configPath).toBe(p.path("alt/custom.yaml"));
    expect(spec.model.name).toBe("chosen");
    expect(spec.baseDir).toBe(p.path("alt"));
  });

  it("-c reads a package.json's yiem property", async () => {
    const p = project({ "other/package.json": JSON.stringify({ yiem: { model: "pkg" } }) });
    expect((await load(p.root, { configPath: "other/package.json" })).model.name).toBe("pkg");
  });
});

describe("interpolation", () => {
  it("replaces ${VAR} and ${VAR:-default} in every string value", async () => {
    const p = project({
      "agent.config.yaml": [
        "name: ${AGENT}-bot",
        "systemPrompt: 'Be ${MOOD:-kind}. Literal: $${NOT_A_VAR}'",
        "model: { name: '${MODEL_NAME}', baseURL: '${OPENAI_BASE_URL:-http://localhost:11434/v1}' }",
        "tools: { deny: ['${DENY:-}x'] }",
        "limits: { toolTimeoutMs: '${TT:-45s}' }",
      ].join("\n"),
    });
    const spec = await load(p.root, { env: { AGENT: "ops", MODEL_NAME: "llama3.1:8b", MOOD: "" } });
    expect(spec.name).toBe("ops-bot");
    expect(spec.systemPrompt).toBe("Be kind. Literal: ${NOT_A_VAR}");
    expect(spec.model.name).toBe("llama3.1:8b");
    expect(spec.model.baseURL).toBe("http://localhost:11434/v1");
    expect(spec.model.apiKey).toBeUndefined();
    expect(spec.tools.deny).toEqual(["x"]);
    expect(spec.limits.toolTimeoutMs).toBe(45000);
  });

  it("an unset variable without a default names the variable, key, file and line", async () => {
    const p = project({ "agent.config.yaml": "name: a\nmodel:\n  name: gpt-4o-mini\n  baseURL: ${MY_URL}\n" });
    await expect(load(p.root)).rejects.toThrow(
      'agent.config.yaml:4: "model.baseURL": environment variable MY_URL is not set',
    );
    await expect(load(p.root)).rejects.toMatchObject({ name: "ConfigError", line: 4, key: "model.baseURL", file: p.path("agent.config.yaml") });
  });

  it("a malformed placeholder is an error", async () => {
    const p = project({ "agent.config.yaml": "model: m\nname: ${not valid}\n" });
    await expect(load(p.root)).rejects.toThrow(/agent\.config\.yaml:2: "name": bad placeholder/);
  });
});

describe("paths", () => {
  it("resolves spec paths against the spec's folder, whatever the cwd", async () => {
    const p = project({
      "cfg/agent.config.yaml": readFileSync(path.join(import.meta.dirname, "../fixtures/config/full.agent.config.yaml"), "utf8"),
      "cfg/prompts/system.md": "From a file.\n",
      "cfg/runs/demo.jsonl": "{}\n",
      "cfg/tools/": "",
      "cfg/more-tools/": "",
      "cfg/hooks/policy.ts": "export default {};\n",
      "cfg/hooks/audit.sh": "#!/bin/sh\n",
      "elsewhere/": "",
    });
    const spec = await load(p.path("elsewhere"), { configPath: "../cfg/agent.config.yaml" });
    const cfg = p.path("cfg");
    expect(spec.systemPrompt).toBe("From a file.\n");
    expect(spec.model.name).toBe(`replay:${path.join(cfg, "runs/demo.jsonl")}`);
    expect(spec.model.pricing).toEqual({ inputPerMTok: 0.15, outputPerMTok: 0.6, cachedInputPerMTok: 0.075 });
    expect(spec.output).toMatchObject({ mode: "native", retries: 1, schema: { type: "object", required: ["answer"] } });
    expect(spec.attachments).toEqual([{ path: path.join(cfg, "prompts/system.md"), name: "prompts/system.md" }]);
    expect(spec.model.replayFile).toBe(path.join(cfg, "runs/demo.jsonl"));
    expect(spec.toolDirs).toEqual([path.join(cfg, "tools"), path.join(cfg, "more-tools")]);
    expect(spec.writeToolDir).toBe(path.join(cfg, "generated"));
    expect(spec.hooks.beforeToolCall).toBe(path.join(cfg, "hooks/policy.ts"));
    expect(spec.hooks.afterToolCall).toEqual({
      command: [path.join(cfg, "hooks/audit.sh"), "--strict", p.path("outside")],
      timeoutMs: 500,
    });
    expect(spec.model).toMatchObject({
      baseURL: "http://127.0.0.1:11434/v1", apiKeyEnv: "LOCAL_KEY", temperature: 0.5, maxTokens: 512,
      stream: false, maxRetries: 0, timeoutMs: 120000,
    });
    expect(spec.builtinTools).toEqual(["listTools", "writeTool"]);
    expect(spec.toolExecution).toBe("parallel");
    expect(spec.strict).toBe(true);
    expect(spec.tools).toEqual({ allow: ["get*", "listTools"], deny: ["getSecret"] });
    expect(spec.limits).toEqual({
      maxTurns: 7, toolTimeoutMs: 1500, runTimeoutMs: 3600000, maxConcurrency: 2, maxTokens: 10000, maxCostUsd: 0.25, loopDetection: 0, maxToolCallsPerResponse: 128,
    });
    // MCP servers: argv ./ paths and cwd against the spec's folder; toolTimeoutMs defaults to limits'.
    expect(spec.mcpServers).toEqual([
      {
        name: "local-fs", definedIn: p.path("cfg/agent.config.yaml"), transport: "stdio",
        command: [path.join(cfg, "bin/fs-server"), "--root", p.path("data")], cwd: path.join(cfg, "tools"), env: { FS_MODE: "read-only" },
        required: false, startupTimeoutMs: 10000, toolTimeoutMs: 45000, tools: { allow: ["read_*"], deny: ["read_secret"] },
      },
      {
        name: "web", definedIn: p.path("cfg/agent.config.yaml"), transport: "http", url: "http://127.0.0.1:3001/mcp",
        headers: { "X-Client": "yiem" }, required: true, startupTimeoutMs: 30000, toolTimeoutMs: 1500, tools: { allow: ["*"], deny: [] },
      },
    ]);
    expect(spec.sessions).toEqual({ save: true });
    expect(spec.sources["sessions.save"]).toBe("spec");
  });

  it("resolves flag paths against cwd, and writeToolDir is never a tool folder by default", async () => {
    const p = project({ "agent.config.yaml": "model: m\ntoolDirs: [a]\n", "a/": "", "sub/b/": "", "sub/c/": "" });
    const spec = await load(p.path("sub"), { overrides: { toolDirs: ["b", "c"] } });
    expect(spec.toolDirs).toEqual([p.path("sub/b"), p.path("sub/c")]);
    expect(spec.writeToolDir).toBeNull();
    expect(spec.sources.toolDirs).toBe("flag");
  });

  it("resolves a replay: model from a flag against cwd", async () => {
    const p = project({ "agent.config.yaml": "model: gpt-4o-mini\n", "sub/rec.jsonl": "{}\n" });
    const spec = await load(p.path("sub"), { env: {}, overrides: { model: "replay:rec.jsonl" } });
    expect(spec.model.replayFile).toBe(p.path("sub/rec.jsonl"));
    expect(spec.sources["model.name"]).toBe("flag");
  });

  it("a command hook given as one string becomes a one-element argv", async () => {
    const p = project({ "agent.config.yaml": "model: m\nhooks: { beforeToolCall: { command: node } }\n" });
    expect((await load(p.root)).hooks.beforeToolCall).toEqual({ command: ["node"], timeoutMs: 30000 });
  });
});

describe("precedence: flag > env > spec > default", () => {
  const specText = [
    "model:",
    "  name: spec-model",
    "  baseURL: http://spec.example/v1",
    "systemPrompt: from spec",
    "toolExecution: parallel",
    "tools: { allow: [a*] }",
    "limits: { maxTurns: 5, toolTimeoutMs: 10s }",
  ].join("\n");

  it("spec beats defaults", async () => {
    const p = project({ "agent.config.yaml": specText });
    const spec = await load(p.root, { env: {} });
    expect(spec.model.name).toBe("spec-model");
    expect(spec.model.baseURL).toBe("http://spec.example/v1");
    expect(spec.limits.maxTurns).toBe(5);
    expect(spec.limits.runTimeoutMs).toBe(0);
    expect(spec.sources).toMatchObject({
      "model.name": "spec", "model.baseURL": "spec", "limits.maxTurns": "spec", "limits.runTimeoutMs": "default",
      "model.apiKey": "default", systemPrompt: "spec", toolExecution: "spec", "tools.allow": "spec", "tools.deny": "default",
    });
  });

  it("env beats spec", async () => {
    const p = project({ "agent.config.yaml": specText });
    const env = { YIEM_MODEL: "env-model", OPENAI_BASE_URL: "http://env.example/v1", OPENAI_API_KEY: "sk-env-123456" };
    const spec = await load(p.root, { env });
    expect(spec.model.name).toBe("env-model");
    expect(spec.model.baseURL).toBe("http://env.example/v1");
    expect(spec.model.apiKey).toBe("sk-env-123456");
    expect(spec.sources).toMatchObject({ "model.name": "env", "model.baseURL": "env", "model.apiKey": "env" });
  });

  it("flags beat env", async () => {
    const p = project({ "agent.config.yaml": specText });
    const env = { YIEM_MODEL: "env-model", OPENAI_BASE_URL: "http://env.example/v1" };
    const spec = await load(p.root, {
      env,
      overrides: {
        model: "flag-model", baseURL: "http://flag.example/v1", system: "from flag", toolExecution: "sequential",
        maxTurns: "3", toolTimeoutMs: "2m", runTimeoutMs: 1500, allowTools: ["x,y", "z"], denyTools: ["q"],
      },
    });
    expect(spec.model.name).toBe("flag-model");
    expect(spec.model.baseURL).toBe("http://flag.example/v1");
    expect(spec.systemPrompt).toBe("from flag");
    expect(spec.toolExecution).toBe("sequential");
    expect(spec.limits).toMatchObject({ maxTurns: 3, toolTimeoutMs: 120000, runTimeoutMs: 1500 });
    expect(spec.tools).toEqual({ allow: ["x", "y", "z"], deny: ["q"] });
    expect(spec.sources).toMatchObject({
      "model.name": "flag", "model.baseURL": "flag", systemPrompt: "flag", toolExecution: "flag",
      "limits.maxTurns": "flag", "limits.toolTimeoutMs": "flag", "limits.runTimeoutMs": "flag", "tools.allow": "flag",
    });
  });

  it("the API key comes from the variable apiKeyEnv names", async () => {
    const p = project({ "agent.config.yaml": "model: { name: m, apiKeyEnv: MY_KEY }\n" });
    const spec = await load(p.root, { env: { MY_KEY: "k-123456", OPENAI_API_KEY: "other-123456" } });
    expect(spec.model.apiKey).toBe("k-123456");
  });

  it("without a spec, a model may come from YIEM_MODEL", async () => {
    const p = project();
    expect((await load(p.root, { env: { ...KEY_ENV, YIEM_MODEL: "gpt-4o" } })).model.name).toBe("gpt-4o");
  });

  it("requireModel false allows no model and no key", async () => {
    const p = project();
    const spec = await load(p.root, { env: {}, requireModel: false });
    expect(spec.model.name).toBe("");
    expect(spec.sources["model.name"]).toBe("default");
  });

  it("needs no key for a local server; Ollama-style names with colons are plain names", async () => {
    const p = project({ "agent.config.yaml": "model: { name: 'qwen:7b', baseURL: 'http://localhost:11434/v1' }\n" });
    const spec = await load(p.root, { env: {} });
    expect(spec.model.name).toBe("qwen:7b");
    expect(spec.model.apiKey).toBeUndefined();
  });
});

describe("interpolateString", () => {
  it.each(["${1X}", "${ VAR }", "${VAR", "a ${} b"])("rejects the malformed placeholder %j", async (text) => {
    const { interpolateString } = await import("../../src/interpolate.js");
    expect(() => interpolateString(text, { VAR: "v" })).toThrow(/bad placeholder/);
  });

  it("keeps text without placeholders and handles several in one string", async () => {
    const { interpolateString } = await import("../../src/interpolate.js");
    expect(interpolateString("$HOME and $1 stay", {})).toBe("$HOME and $1 stay");
    expect(interpolateString("${A}/${B:-b}/${C:-}", { A: "a" })).toBe("a/b/");
  });
});
