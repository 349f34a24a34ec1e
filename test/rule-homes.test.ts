/**
 * Rules with one home each (issue: one home per rule): the built-in tool names, the tool-file
 * suffixes, the "inputSchema is an object schema" check, token counts and ajv loading.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUILTIN_TOOL_NAMES } from "../src/tools/builtins/names.js";
import { BUILTIN_TOOL_NAMES as GENERATOR_RESERVED, checkInputSchema } from "../src/tools/generator.js";
import { inputSchemaProblem, checkToolShape } from "../src/tools/define.js";
import { TOOL_FILE_SUFFIXES, toolFileKind } from "../src/tools/loader.js";
import { addUsage, tokenCount, zeroUsage } from "../src/tools/usage.js";
import { parseUsage } from "../src/provider/wire-response.js";
import { contentText } from "../src/tools/content.js";
import { newAjv } from "../src/ajv.js";
import { MODEL_DEFAULTS } from "../src/provider/defaults.js";
import { DEFAULT_API_KEY_ENV, DEFAULT_MODEL_SETTINGS } from "../src/config/types.js";
import { createEmitter } from "../src/loop/events.js";

describe("one home per rule", () => {
  it("built-in names: the spec schema's enum and the generator's reserved names are the one list", () => {
    const schema = JSON.parse(readFileSync(join(import.meta.dirname, "..", "schema", "agent.schema.json"), "utf8"));
    expect(JSON.stringify(schema)).toContain(JSON.stringify([...BUILTIN_TOOL_NAMES]));
    expect(GENERATOR_RESERVED).toBe(BUILTIN_TOOL_NAMES);
  });

  it("every tool-file suffix is one the loader loads", () => {
    for (const suffix of TOOL_FILE_SUFFIXES) expect(toolFileKind(`t${suffix}`)).not.toBeNull();
  });

  it("the inputSchema rule: the shape check and writeTool drafts say the same", async () => {
    expect(inputSchemaProblem({ type: "array" })).toBe(`"inputSchema.type" must be "object"`);
    expect(inputSchemaProblem([])).toBe(`"inputSchema" must be an object`);
    expect(inputSchemaProblem({ type: "object" })).toBeUndefined();
    const tool = { name: "t", label: "t", description: "t", inputSchema: { type: "array" }, execute: () => ({ content: [] }) };
    expect(checkToolShape(tool)).toBe(inputSchemaProblem(tool.inputSchema));
    await expect(checkInputSchema({ type: "array" })).rejects.toThrow(`${inputSchemaProblem({ type: "array" })} (tool arguments are an object)`);
  });

  it("token counts: the wire and tool results round the same way (down)", () => {
    expect(tokenCount(2.9)).toBe(2);
    const total = zeroUsage();
    addUsage(total, { promptTokens: 2.9, completionTokens: 1.5 });
    expect(total).toEqual(parseUsage({ prompt_tokens: 2.9, completion_tokens: 1.5 }));
  });

  it("content to text: images shown with their size, or left out", () => {
    const parts = [{ type: "text" as const, text: "a" }, { type: "image" as const, mimeType: "image/png", data: "AAAA" }];
    expect(contentText(parts)).toBe("a\n[image image/png, 3 bytes]");
    expect(contentText(parts, "omit")).toBe("a");
  });

  it("ajv comes one way, with formats on request", () => {
    const plain = newAjv({});
    expect(() => plain.compile({ type: "string", format: "email" })).toThrow();
    const withFormats = newAjv({ strict: false }, { formats: true });
    expect(withFormats.compile({ type: "string", format: "email" })("a@b.c")).toBe(true);
  });

  it("model defaults: the spec shows the client's own", () => {
    expect(DEFAULT_MODEL_SETTINGS).toEqual({ stream: MODEL_DEFAULTS.stream, maxRetries: MODEL_DEFAULTS.maxRetries, timeoutMs: MODEL_DEFAULTS.timeoutMs });
    expect(DEFAULT_API_KEY_ENV).toBe(MODEL_DEFAULTS.apiKeyEnv);
  });

  it("the earlier createEmitter is a frame's emit: a second agentEnd is never written", () => {
    const seen: string[] = [];
    const emit = createEmitter("r", (event) => seen.push(`${event.type}:${event.seq}`));
    const end = { type: "agentEnd" as const, stopReason: "completed" as const, turns: 0, toolCalls: 0, usage: zeroUsage(), durationMs: 0 };
    emit({ type: "warning", message: "w" });
    emit(end);
    emit(end);
    expect(seen).toEqual(["warning:1", "agentEnd:2"]);
  });
});
