import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Ajv } from "ajv";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { loadSpec } from "../../src/config/load.js";

const root = path.join(import.meta.dirname, "../..");
const schema = JSON.parse(readFileSync(path.join(root, "schema/agent.schema.json"), "utf8"));
const validate = new Ajv({ allErrors: true, allowUnionTypes: true }).compile(schema);

/** The repository's own specs: agent.config.yaml and configs/*.yaml (whatever exists). */
function repoSpecs(): string[] {
  const configs = path.join(root, "configs");
  const inConfigs = existsSync(configs)
    ? readdirSync(configs).filter((f) => /\.ya?ml$/.test(f)).map((f) => path.join(configs, f))
    : [];
  return [path.join(root, "agent.config.yaml"), ...inConfigs].filter((file) => existsSync(file));
}

describe("schema/agent.schema.json", () => {
  it("is a draft-07 schema with an $id", () => {
    expect(schema.$schema).toBe("http://json-schema.org/draft-07/schema#");
    expect(schema.$id).toMatch(/agent\.schema\.json$/);
  });

  it("gives every property a title and a description, and closes every object", () => {
    const visit = (node: Record<string, unknown>, where: string): void => {
      if (node.properties) {
        expect(node.additionalProperties, `${where} additionalProperties`).toBe(false);
        for (const [key, child] of Object.entries(node.properties as Record<string, Record<string, unknown>>)) {
          expect(child.title, `${where}.${key} title`).toBeTypeOf("string");
          expect(child.description, `${where}.${key} description`).toBeTypeOf("string");
          visit(child, `${where}.${key}`);
        }
      }
    };
    visit(schema, "spec");
    for (const [name, def] of Object.entries(schema.definitions as Record<string, Record<string, unknown>>)) {
      visit(def, `definitions.${name}`);
    }
  });

  it("accepts the full fixture, which uses every key", () => {
    const full = parse(readFileSync(path.join(root, "test/fixtures/config/full.agent.config.yaml"), "utf8"));
    expect(validate(full), JSON.stringify(validate.errors)).toBe(true);
    const keys = Object.keys(schema.properties).filter((key) => key !== "systemPrompt");
    expect(Object.keys(full).sort()).toEqual(keys.sort());
  });

  it.each([
    [{ model: { name: "m", extra: 1 } }],
    [{ hooks: { beforeToolCall: { command: ["x"], shell: true } } }],
    [{ limits: { runTimeoutMs: -1 } }],
    [{ builtinTools: ["listTools", "listTools"] }],
  ])("rejects %j", (spec) => {
    expect(validate(spec)).toBe(false);
  });
});

describe("the repository's specs", () => {
  it("agent.config.yaml exists at the top level", () => {
    expect(existsSync(path.join(root, "agent.config.yaml"))).toBe(true);
  });

  for (const file of repoSpecs()) {
    it(`${path.relative(root, file)} loads and validates`, async () => {
      const env = { OPENAI_API_KEY: "sk-test-0123456789" };
      const spec = await loadSpec({ cwd: root, configPath: file, env, overrides: {}, requireModel: false });
      expect(spec.configPath).toBe(file);
      expect(spec.model.name).not.toBe("");
    });
  }
});
