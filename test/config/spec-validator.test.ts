/**
 * The spec validator compiled at build time (scripts/spec-validator.mjs, bundled as
 * dist/bundle/vendor/spec-validator.cjs; src/config/validate.ts uses it in the bundle): it must
 * judge every spec exactly as ajv compiling schema/agent.schema.json at run time with the same
 * options does, errors included (their order, params, schema and data: verbose), since the spec's
 * error messages are made from them. Compared over the repository's specs, every one-key change
 * of them (another type, an unknown key, a key removed), and arbitrary JSON put anywhere in them.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import fc from "fast-check";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { newAjv } from "../../src/ajv.js";
import { checksum } from "../../src/checksum.js";
import { SPEC_AJV_OPTIONS } from "../../src/config/spec-ajv-options.js";

interface Validate {
  (value: unknown): boolean;
  errors?: unknown[] | null;
  schemaChecksum?: string;
}

const root = path.join(import.meta.dirname, "../..");
const schemaBytes = readFileSync(path.join(root, "schema/agent.schema.json"));
const bundled = (createRequire(import.meta.url)(path.join(root, "dist/bundle/vendor/spec-validator.cjs")) as { default: Record<string, Validate> }).default["yiem:spec-validator"]!;
const atRunTime = newAjv(SPEC_AJV_OPTIONS).compile(JSON.parse(schemaBytes.toString("utf8"))) as Validate;

/** What a validator says of `value`: valid or not, and its errors. */
function verdict(validate: Validate, value: unknown): { valid: boolean; errors: unknown } {
  const valid = validate(structuredClone(value));
  return { valid, errors: structuredClone(validate.errors ?? null) };
}

const repoSpecs = [path.join(root, "agent.config.yaml"), ...readdirSync(path.join(root, "configs")).filter((f) => /\.ya?ml$/.test(f)).map((f) => path.join(root, "configs", f))]
  .filter((file) => existsSync(file))
  .map((file) => parse(readFileSync(file, "utf8")) as Record<string, unknown>);

/** A spec that sets most keys, so their subschemas are reached. */
const fullSpec = {
  name: "full",
  systemPrompt: "be brief",
  model: { name: "m", baseURL: "http://127.0.0.1:1/v1", apiKeyEnv: "KEY", temperature: 0.5, maxTokens: 100, maxTokensField: "max_tokens", stream: "auto", textToolCalls: true, maxRetries: 1, timeoutMs: "30s", pricing: { inputPerMTok: 1, outputPerMTok: 2 } },
  toolDirs: ["./tools"],
  builtinTools: ["listTools", "writeTool"],
  writeToolDir: "./tools",
  toolExecution: "parallel",
  tools: { allow: ["a*"], deny: ["b"] },
  limits: { maxTurns: 3, toolTimeoutMs: 1000, runTimeoutMs: "2m", maxConcurrency: 2, maxTokens: 1000, maxCostUsd: 0.5, loopDetection: 3, maxToolCallsPerResponse: 4 },
  strict: true,
  hooks: { beforeToolCall: "./hooks/before.sh", afterToolCall: { command: ["node", "after.js"], timeoutMs: "5s" } },
  mcpServers: {
    local: { type: "stdio", command: ["node", "server.js"], args: ["--quiet"], cwd: ".", env: { A: "1" }, required: true, startupTimeoutMs: "10s", toolTimeoutMs: 1000, tools: { allow: ["x"], deny: ["y"] } },
    remote: { type: "http", url: "http://127.0.0.1:1/mcp", headers: { Authorization: "Bearer ${TOKEN}" } },
  },
  output: { schema: { type: "object" }, mode: "tool", retries: 1 },
  attachments: ["notes.md"],
  sessions: { save: true },
};

/** Every value reachable in `value`, with its path. */
function paths(value: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  const here = [at];
  if (Array.isArray(value)) return [...here, ...value.flatMap((item, i) => paths(item, [...at, i]))];
  if (value && typeof value === "object") return [...here, ...Object.entries(value).flatMap(([key, item]) => paths(item, [...at, key]))];
  return here;
}

/** `spec` with the value at `at` changed by `change` (which gets the old value and returns the new, or undefined to remove it). */
function changed(spec: unknown, at: Array<string | number>, change: (old: unknown) => unknown): unknown {
  if (at.length === 0) return change(spec);
  const copy = structuredClone(spec) as Record<string | number, unknown>;
  let node = copy;
  for (const key of at.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = at[at.length - 1]!;
  const next = change(node[last]);
  if (next === undefined) delete node[last];
  else node[last] = next;
  return copy;
}

const OTHER_VALUES: unknown[] = [1, -1, 1.5, "x", "", true, null, [], {}, ["x"], { unknownKey: 1 }];

describe("the spec validator compiled at build time", () => {
  it("was made from this schema text (its checksum, which src/config/validate.ts compares)", () => {
    expect(bundled.schemaChecksum).toBe(checksum(schemaBytes));
  });

  it("judges the repository's specs and every one-key change of them as ajv at run time does", () => {
    let cases = 0;
    let invalid = 0;
    for (const spec of [...repoSpecs, fullSpec]) {
      for (const at of paths(spec)) {
        const variants = [
          ...OTHER_VALUES.map((other) => changed(spec, at, () => other)),
          changed(spec, at, () => undefined),
          changed(spec, at, (old) => (old && typeof old === "object" && !Array.isArray(old) ? { ...old, unknownKey: "x" } : old)),
        ];
        for (const variant of variants) {
          const expected = verdict(atRunTime, variant);
          expect(verdict(bundled, variant), JSON.stringify(variant)).toEqual(expected);
          cases++;
          if (!expected.valid) invalid++;
        }
      }
    }
    // The sweep reached the schema's branches: many cases, most of them errors of some kind.
    expect(repoSpecs.length).toBeGreaterThan(1);
    expect(cases).toBeGreaterThan(500);
    expect(invalid).toBeGreaterThan(cases / 2);
    expect(verdict(bundled, fullSpec)).toEqual({ valid: true, errors: null });
  });

  it("judges arbitrary JSON anywhere in a spec as ajv at run time does", () => {
    const targets = paths(fullSpec);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: targets.length - 1 }), fc.jsonValue(), (index, value) => {
        const variant = changed(fullSpec, targets[index]!, () => value);
        expect(verdict(bundled, variant)).toEqual(verdict(atRunTime, variant));
      }),
      { numRuns: 400 },
    );
  });
});
