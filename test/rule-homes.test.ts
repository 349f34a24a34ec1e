/**
 * Rules with one home each: the built-in tool names, the tool-file suffixes, the "inputSchema is
 * an object schema" check, token counts, ajv loading, name glob lists, and re-exports (a name is
 * imported from its home, never through another module).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
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
import { createRunFrame } from "../src/loop/run-frame.js";
import { globListMatcher, splitGlobList } from "../src/glob-list.js";
import { createToolPolicy } from "../src/tools/policy.js";

const SRC = join(import.meta.dirname, "..", "src");
/** Every src file, src-relative, with its text. */
function sources(dir = SRC): Array<[string, string]> {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry): Array<[string, string]> => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") ? [[relative(SRC, path), readFileSync(path, "utf8")]] : [];
  });
}

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

  it("an agentEnd body emitted through a frame ends the run once: a second agentEnd is never written", () => {
    const seen: string[] = [];
    const { emit } = createRunFrame({ runId: "r", sink: (event) => seen.push(`${event.type}:${event.seq}`) });
    const end = { type: "agentEnd" as const, stopReason: "completed" as const, turns: 0, toolCalls: 0, usage: zeroUsage(), durationMs: 0 };
    emit({ type: "warning", message: "w" });
    emit(end);
    emit(end);
    expect(seen).toEqual(["warning:1", "agentEnd:2"]);
  });

  it("glob lists: one syntax in src/glob-list.ts; no other file splits or compiles globs", () => {
    const names = ["getTime", "getWeather", "listTools", "writeTool", "readFile"];
    const allow = ["get*, listTools", "[rw]*"];
    const deny = ["*Weather", "read?ile"];
    const policy = createToolPolicy(allow, deny);
    const [allowed, denied] = [globListMatcher(allow), globListMatcher(deny)];
    expect(names.filter(policy)).toEqual(names.filter((n) => allowed(n) && !denied(n)));
    expect(names.filter(policy)).toEqual(["getTime", "listTools", "writeTool"]);
    expect(splitGlobList(allow)).toEqual(["get*", "listTools", "[rw]*"]);
    const twins = sources()
      .filter(([file, text]) => file !== "glob-list.ts" && /\bglob(?!al)/i.test(text))
      .filter(([, text]) => /\.split\(","\)|new RegExp\(|\/\[\*\?\[\]\/|"\[\^\]\*"/.test(text))
      .map(([file]) => file);
    expect(twins).toEqual([]);
  });

  it("names are imported from their home: only the library entry, the bundle's CLI entry and the openai bundle's globals re-export", () => {
    const reexporting = sources()
      .filter(([, text]) => ts.preProcessFile(text, true, true).importedFiles.length > 0 && /^export (\*|(type )?\{[^}]*\}) from /m.test(text))
      .map(([file]) => file)
      .sort();
    // provider/http/vendor-globals.ts is no module yiem imports: esbuild injects its exports into the openai vendor bundle (scripts/bundle.mjs).
    expect(reexporting).toEqual(["cli/bin-entry.ts", "index.ts", "provider/http/vendor-globals.ts"]);
  });

  it("the CLI tells errors apart by their type, never by their name", () => {
    const byName = sources()
      .filter(([file]) => file.startsWith("cli/"))
      .filter(([, text]) => /\b(error|err|e|reason|cause)\)?\??\.name\b|["'][A-Za-z]*Error["']\s*[!=]==|[!=]==\s*["'][A-Za-z]*Error["']|isUsageProblem/.test(text))
      .map(([file]) => file);
    expect(byName).toEqual([]);
  });

  it("why a program did not start is worded in one place (command tools, hooks and MCP stdio servers)", () => {
    const wording = sources().filter(([, text]) => text.includes("command not found or cwd missing") || text.includes("command is not executable:")).map(([file]) => file);
    expect(wording).toEqual(["tools/process.ts"]);
  });
});
