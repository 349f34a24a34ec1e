import { afterEach, describe, expect, it } from "vitest";
import { loadSpec } from "../../src/config/load.js";
import { ConfigError } from "../../src/config/errors.js";
import type { LoadSpecOptions } from "../../src/config/types.js";
import { tempProject, type TempProject } from "../fixtures/config/temp-project.js";

const projects: TempProject[] = [];
afterEach(() => {
  for (const created of projects.splice(0)) created.remove();
});

/** Load a project whose agent.config.yaml is `lines`; return the ConfigError it must throw. */
async function failure(files: Record<string, string>, more: Partial<LoadSpecOptions> = {}): Promise<ConfigError> {
  const p = tempProject(files);
  projects.push(p);
  try {
    await loadSpec({ cwd: p.root, env: { OPENAI_API_KEY: "sk-test-0123456789" }, overrides: {}, ...more });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

const yaml = (...lines: string[]) => ({ "agent.config.yaml": lines.join("\n") + "\n" });

describe("spec errors name the file, line and key", () => {
  it("YAML syntax error", async () => {
    const error = await failure(yaml("model: m", "limits:", "  maxTurns: [1, 2", "name: x"));
    expect(error.message).toMatch(/^agent\.config\.yaml:\d+: YAML syntax error: /);
    expect(error.line).toBeGreaterThanOrEqual(3);
    expect(error.file).toMatch(/agent\.config\.yaml$/);
  });

  it("YAML duplicate key", async () => {
    const error = await failure(yaml("model: m", "name: a", "name: b"));
    expect(error.message).toMatch(/^agent\.config\.yaml:3: YAML syntax error: Map keys must be unique/);
  });

  it("JSON syntax error", async () => {
    const error = await failure({ "agent.config.json": '{\n  "model": "m",\n  "name": x\n}\n' });
    expect(error.message).toMatch(/^agent\.config\.json:3: invalid JSON: /);
  });

  it("unknown top-level key, with the nearest known key", async () => {
    const error = await failure(yaml("# comment", "name: a", "model: m", "", "builtinTools: [listTools]", "", "toolDir: [tools]"));
    expect(error.message).toBe('agent.config.yaml:7: unknown key "toolDir" in the spec (did you mean "toolDirs"?)');
    expect(error).toMatchObject({ line: 7, key: "toolDir" });
  });

  it("unknown key with nothing close: the allowed keys", async () => {
    const error = await failure(yaml("model: m", "colour: blue"));
    expect(error.message).toBe(
      'agent.config.yaml:2: unknown key "colour" in the spec (allowed: $schema, name, systemPrompt, systemPromptFile, ' +
        "model, toolDirs, builtinTools, writeToolDir, toolExecution, tools, limits, strict, hooks, mcpServers, output, attachments, sessions)",
    );
  });

  it("unknown nested key, with the nearest known key", async () => {
    const error = await failure(yaml("model: m", "limits:", "  maxTurns: 3", "  maxTurn: 4"));
    expect(error.message).toBe('agent.config.yaml:4: unknown key "maxTurn" in "limits" (did you mean "maxTurns"?)');
  });

  it("a key in the wrong case gets the right one", async () => {
    const error = await failure(yaml("model:", "  name: m", "  baseUrl: http://localhost:1/v1"));
    expect(error.message).toBe('agent.config.yaml:3: unknown key "baseUrl" in "model" (did you mean "baseURL"?)');
  });

  it("wrong type", async () => {
    const error = await failure(yaml("model: m", "limits:", "  maxTurns: ten"));
    expect(error.message).toBe('agent.config.yaml:3: "limits.maxTurns" must be an integer >= 1 (got "ten")');
    expect(error.key).toBe("limits.maxTurns");
  });

  it("below the minimum", async () => {
    const error = await failure(yaml("model: m", "limits: { maxConcurrency: 0 }"));
    expect(error.message).toBe('agent.config.yaml:2: "limits.maxConcurrency" must be an integer >= 1 (got 0)');
  });

  it("a value outside an enum", async () => {
    const error = await failure(yaml("model: m", "toolExecution: fast"));
    expect(error.message).toBe('agent.config.yaml:2: "toolExecution" must be one of sequential, parallel (got "fast")');
  });

  it("an unknown built-in tool", async () => {
    const error = await failure(yaml("model: m", "builtinTools:", "  - listTools", "  - deleteAll"));
    expect(error.message).toBe('agent.config.yaml:4: "builtinTools[1]" must be one of listTools, writeTool (got "deleteAll")');
  });

  it("a bad duration", async () => {
    const error = await failure(yaml("model: m", "limits:", "  toolTimeoutMs: 3 weeks"));
    expect(error.message).toMatch(/^agent\.config\.yaml:3: "limits\.toolTimeoutMs" must be a duration: milliseconds/);
  });

  it("a list where a string belongs", async () => {
    const error = await failure(yaml("model: m", "toolDirs: tools"));
    expect(error.message).toBe('agent.config.yaml:2: "toolDirs" must be a list of strings (got "tools")');
  });

  it("both systemPrompt and systemPromptFile", async () => {
    const error = await failure(yaml("model: m", "systemPrompt: hi", "systemPromptFile: p.md"));
    expect(error.message).toBe('agent.config.yaml:3: use either "systemPrompt" or "systemPromptFile", not both');
  });

  it("a model object without a name", async () => {
    const error = await failure(yaml("name: a", "model:", "  temperature: 0"));
    expect(error.message).toBe('agent.config.yaml:2: "model" is missing the key "name"');
  });

  it("the spec is not a mapping", async () => {
    const error = await failure(yaml("- model: m"));
    expect(error.message).toBe("agent.config.yaml:1: the spec must be a mapping of keys (got a list)");
  });

  it("a missing tool folder is named", async () => {
    const error = await failure({ ...yaml("model: m", "toolDirs:", "  - tools", "  - missing-tools"), "tools/": "" });
    expect(error.message).toMatch(/^agent\.config\.yaml:4: toolDirs\[1\]: tool folder "missing-tools" not found \(\/.*missing-tools\)$/);
    expect(error.key).toBe("toolDirs[1]");
  });

  it("a missing system prompt file", async () => {
    const error = await failure(yaml("model: m", "systemPromptFile: prompts/none.md"));
    expect(error.message).toMatch(/^agent\.config\.yaml:2: systemPromptFile: system prompt file "prompts\/none\.md" not found/);
  });

  it("an unknown model scheme", async () => {
    const error = await failure(yaml("name: a", "model: replai:runs/demo.jsonl"));
    expect(error.message).toMatch(/^agent\.config\.yaml:2: unknown model scheme "replai:" in "replai:runs\/demo\.jsonl"/);
  });

  it("a missing replay file", async () => {
    const error = await failure(yaml("name: a", "model:", "  name: replay:runs/none.jsonl"));
    expect(error.message).toMatch(/^agent\.config\.yaml:3: model\.name: replay file "runs\/none\.jsonl" not found/);
  });

  it("a missing hook module", async () => {
    const error = await failure(yaml("model: m", "hooks:", "  beforeToolCall: ./hooks/none.ts"));
    expect(error.message).toMatch(/^agent\.config\.yaml:3: hooks\.beforeToolCall: hook module "\.\/hooks\/none\.ts" not found/);
  });

  it("a hook command string with arguments", async () => {
    const error = await failure(yaml("model: m", "hooks:", "  afterToolCall:", "    command: ./audit.sh --strict"));
    expect(error.message).toMatch(/^agent\.config\.yaml:4: "hooks\.afterToolCall\.command" must list the program/);
  });

  it("an error in package.json#yiem points into package.json", async () => {
    const pkg = '{\n  "name": "x",\n  "yiem": {\n    "model": "m",\n    "toolExecution": 3\n  }\n}\n';
    const error = await failure({ "package.json": pkg });
    expect(error.message).toBe('package.json:5: "toolExecution" must be one of sequential, parallel (got 3)');
  });

  it("a bad value in a .json spec points at its line", async () => {
    const error = await failure({ ".yiemrc.json": '{\n  "model": "m",\n  "limits": {\n    "maxTurns": 0\n  }\n}\n' });
    expect(error.message).toBe('.yiemrc.json:4: "limits.maxTurns" must be an integer >= 1 (got 0)');
  });
});

describe("model and key errors", () => {
  it("no model anywhere", async () => {
    const error = await failure({}, { env: {} });
    expect(error.message).toMatch(/^no model: no spec file was found; pass --model, set YIEM_MODEL/);
  });

  it("a spec without a model names the file", async () => {
    const error = await failure(yaml("name: a"));
    expect(error.message).toMatch(/^no model: agent\.config\.yaml sets no "model"/);
  });

  it("a missing API key for api.openai.com names the variable", async () => {
    const error = await failure(yaml("model: { name: gpt-4o-mini, apiKeyEnv: TEAM_OPENAI_KEY }"), { env: {} });
    expect(error.message).toMatch(/^TEAM_OPENAI_KEY is not set: model "gpt-4o-mini" at https:\/\/api\.openai\.com\/v1 needs an API key/);
    expect(error.key).toBe("TEAM_OPENAI_KEY");
  });

  it("a key is required for an explicit api.openai.com baseURL too", async () => {
    const error = await failure(yaml("model: { name: m, baseURL: 'https://api.openai.com/v1' }"), { env: {} });
    expect(error.message).toMatch(/^OPENAI_API_KEY is not set/);
  });

  it("an unknown scheme from YIEM_MODEL names the variable", async () => {
    const error = await failure({}, { env: { YIEM_MODEL: "file:./x.jsonl" } });
    expect(error.message).toMatch(/^YIEM_MODEL: unknown model scheme "file:"/);
  });

  it("a bad OPENAI_BASE_URL", async () => {
    const error = await failure({}, { env: { OPENAI_BASE_URL: "localhost:11434" }, overrides: { model: "m" } });
    expect(error.message).toBe('OPENAI_BASE_URL must be an http(s) URL (got "localhost:11434")');
  });
});

describe("flag errors", () => {
  it("--tool-execution outside the enum", async () => {
    const error = await failure({}, { overrides: { model: "m", toolExecution: "fast" } });
    expect(error.message).toBe('--tool-execution must be one of sequential, parallel (got "fast")');
    expect(error.key).toBe("--tool-execution");
  });

  it("--max-turns not an integer", async () => {
    const error = await failure({}, { overrides: { model: "m", maxTurns: "ten" } });
    expect(error.message).toBe('--max-turns must be an integer >= 1 (got "ten")');
  });

  it("--tool-timeout garbage", async () => {
    const error = await failure({}, { overrides: { model: "m", toolTimeoutMs: "soon" } });
    expect(error.message).toMatch(/^--tool-timeout: invalid duration "soon"/);
  });

  it("--tool-dir that does not exist", async () => {
    const error = await failure({}, { overrides: { model: "m", toolDirs: ["nope"] } });
    expect(error.message).toMatch(/^--tool-dir: tool folder "nope" not found/);
  });

  it("-c naming a missing file", async () => {
    const error = await failure({}, { configPath: "missing.yaml", overrides: { model: "m" } });
    expect(error.message).toBe("config file missing.yaml not found");
  });
});

describe("every problem of a load is reported at once", () => {
  it("schema errors, missing files and bad flags come in one error, in file order, without the key", async () => {
    const error = await failure(
      {
        "tools/": "",
        ...yaml(
        "model:",
        "  name: gpt-4o-mini",
        "  baseUrl: http://localhost:11434/v1",
        "systemPromptFile: prompts/none.md",
        "toolDirs: [tools, missing-tools]",
        "limits:",
        "  maxTurns: ten",
        "  maxTurn: 3",
        "hooks:",
        "  beforeToolCall: ./hooks/none.ts",
        ),
      },
      { env: {}, overrides: { toolTimeoutMs: "soon" } },
    );
    const lines = error.message.split("\n");
    expect(lines[0]).toBe("7 problems:");
    expect(lines.slice(1)).toEqual([
      '  agent.config.yaml:3: unknown key "baseUrl" in "model" (did you mean "baseURL"?)',
      '  agent.config.yaml:7: "limits.maxTurns" must be an integer >= 1 (got "ten")',
      '  agent.config.yaml:8: unknown key "maxTurn" in "limits" (did you mean "maxTurns"?)',
      expect.stringMatching(/^ {2}agent\.config\.yaml:4: systemPromptFile: system prompt file "prompts\/none\.md" not found/),
      expect.stringMatching(/^ {2}agent\.config\.yaml:5: toolDirs\[1\]: tool folder "missing-tools" not found/),
      expect.stringMatching(/^ {2}--tool-timeout: invalid duration "soon"/),
      expect.stringMatching(/^ {2}agent\.config\.yaml:10: hooks\.beforeToolCall: hook module "\.\/hooks\/none\.ts" not found/),
    ]);
    expect(error.problems).toHaveLength(7);
    // The key would be asked for next, but a fixed baseURL may make it unneeded.
    expect(error.message).not.toContain("OPENAI_API_KEY");
  });

  it("a bad value is not also reported as missing", async () => {
    const error = await failure(yaml("name: ${UNSET_NAME_VAR}", "model:", "  name: ${UNSET_MODEL_VAR}", "  stream: maybe"), { env: {} });
    expect(error.problems?.map((p) => p.message)).toEqual([
      'agent.config.yaml:1: "name": environment variable UNSET_NAME_VAR is not set (use ${UNSET_NAME_VAR:-default} for a default)',
      'agent.config.yaml:3: "model.name": environment variable UNSET_MODEL_VAR is not set (use ${UNSET_MODEL_VAR:-default} for a default)',
      'agent.config.yaml:4: "model.stream" must be one of auto, true, false (got "maybe")',
    ]);
    expect(error.message).not.toMatch(/no model/);
  });

  it("several bad flags at once", async () => {
    const error = await failure({}, { overrides: { model: "m", maxTurns: "ten", runTimeoutMs: "later", toolDirs: ["nope", "nope2"] } });
    expect(error.problems?.map((p) => p.key)).toEqual(["--tool-dir", "--tool-dir", "--max-turns", "--timeout"]);
  });

  it("a spec file that cannot be read still lets the flags be checked, and is not 'no model'", async () => {
    const error = await failure({}, { configPath: "missing.yaml", overrides: { maxTurns: "0" }, env: {} });
    expect(error.message).toBe('2 problems:\n  config file missing.yaml not found\n  --max-turns must be an integer >= 1 (got "0")');
  });

  it("the caller's command-line problems come first", async () => {
    const error = await failure(yaml("model: m", "toolExecution: fast"), { commandLineProblems: ["no prompt: give it as words"] });
    expect(error.message).toBe('2 problems:\n  no prompt: give it as words\n  agent.config.yaml:2: "toolExecution" must be one of sequential, parallel (got "fast")');
  });

  it("the missing key alone is reported once nothing else is wrong", async () => {
    const error = await failure(yaml("model: gpt-4o-mini"), { env: {} });
    expect(error.problems).toBeUndefined();
    expect(error.message).toMatch(/^OPENAI_API_KEY is not set/);
  });

  it("a bad list item does not shift the other items' names", async () => {
    const error = await failure({ ...yaml("model: m", "toolDirs: [tools, 3, missing]"), "tools/": "" });
    expect(error.message).toBe('agent.config.yaml:2: "toolDirs[1]" must be a non-empty string (got 3)');
  });
});

describe("secrets stay out of errors", () => {
  it("a secret-named variable's value is redacted from a message", async () => {
    const token = "ghp_abcdefghijklmnop";
    const error = await failure(yaml("model: m", "limits: { maxTurns: '${GITHUB_TOKEN}' }"), {
      env: { GITHUB_TOKEN: token, OPENAI_API_KEY: "sk-test-0123456789" },
    });
    expect(error.message).toBe('agent.config.yaml:2: "limits.maxTurns" must be an integer >= 1 (got "***")');
    expect(error.message).not.toContain(token);
  });

  it("a key pasted into apiKeyEnv is not echoed", async () => {
    const error = await failure(yaml("model: { name: m, apiKeyEnv: 'sk-proj-pasted-by-mistake-123' }"));
    expect(error.message).toBe(
      'agent.config.yaml:1: "model.apiKeyEnv" must be an environment variable NAME (like OPENAI_API_KEY), not a value',
    );
  });
});
