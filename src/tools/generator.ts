/**
 * The tool generator shared by the `writeTool` built-in and `yiem tools new`: a tool draft in,
 * a `.ts` tool file out. Rules:
 * - The model's (or user's) code bodies go verbatim inside fixed function signatures; every other
 *   value reaches the source only through `JSON.stringify`, so no label, description or schema
 *   text can add a statement.
 * - Before anything is written: the draft's fields have the right types; the name matches
 *   `GENERATED_TOOL_NAME_PATTERN` and is no built-in's; it collides with no loaded tool or tool file
 *   unless overwriting was asked (a built-in is never replaced); the schema is an object schema
 *   ajv compiles; every code body parses on its own (so it cannot close its function early) and
 *   the whole file parses. Errors name the field and the line relative to that field's code.
 * - The file is written atomically into the real tool folder; a folder or target file that is a
 *   symbolic link is refused. Any failure throws `ToolDraftError` and writes nothing.
 */
import { lstat, mkdir, readdir, readFile, realpath, unlink } from "node:fs/promises";
import { join, relative, resolve, isAbsolute, sep } from "node:path";
import { writeFileAtomic } from "./atomic-write.js";
import { GENERATED_TOOL_NAME_PATTERN } from "./define.js";
import type { ToolRegistry } from "./registry.js";
import { errorMessage, loadToolFile } from "./loader.js";
import type { JsonSchema, Tool } from "./types.js";
import { checkSchema } from "./validate.js";
import { findSyntaxProblem, type SyntaxProblem } from "./modules/syntax.js";

/** Names the generator accepts (defined in define.ts, so the writeTool definition needs no generator). */
export { GENERATED_TOOL_NAME_PATTERN };

/** Built-in tool names: never generated, never replaced. */
export const BUILTIN_TOOL_NAMES: readonly string[] = ["listTools", "writeTool"];

const LIMITS = { label: 200, description: 10_000, code: 200_000 } as const;

/** What `writeTool` receives and `yiem tools new` builds. */
export interface ToolDraft {
  name: string;
  label: string;
  description: string;
  inputSchema: JsonSchema;
  /** Body of `async execute(toolCallId, args, signal, onPartialResult)`. */
  executeCode: string;
  /** Body of `async validateRequiredArgs(args)`: returns an error message or nothing. */
  validateCode?: string;
  /** Body of `async prepareArguments(args)`: returns the (reshaped) arguments. */
  prepareCode?: string;
  /** `parallelToolExecute` (default true). */
  parallel?: boolean;
}

/** A draft that cannot be written; the message says what to fix. */
export class ToolDraftError extends Error {
  override readonly name = "ToolDraftError";
}

type CodeField = "executeCode" | "validateCode" | "prepareCode";

export interface GeneratedSource {
  source: string;
  /** Where each code body sits in `source` (1-based first line, number of lines). */
  parts: Array<{ field: CodeField; firstLine: number; lines: number }>;
}

export interface WriteGeneratedToolOptions {
  /** The tool folder; created when missing. */
  dir: string;
  /** Loaded tools, for the collision check. */
  registry?: ToolRegistry;
  /** Allow replacing this folder's own `<name>.ts` (never a built-in). */
  overwrite?: boolean;
  /** How the caller asks for overwriting, for messages (default `"overwrite": true`). */
  overwriteHint?: string;
}

export interface WrittenTool {
  name: string;
  /** Absolute real path of the written file. */
  path: string;
  source: string;
  /** The file's previous content when it was overwritten, else null (for rollback). */
  previous: string | null;
}

/** Checks `draft` fully, then writes `<dir>/<name>.ts` atomically. Throws `ToolDraftError`. */
export async function writeGeneratedTool(draft: unknown, options: WriteGeneratedToolOptions): Promise<WrittenTool> {
  const checked = checkDraftShape(draft);
  await checkInputSchema(checked.inputSchema);
  const { source } = await generateCheckedSource(checked);
  const target = await prepareTarget(options.dir, checked.name, [`${checked.name}.ts`], options);
  const path = target[0];
  const previous = await readFile(path, "utf8").catch(() => null);
  await writeFileAtomic(path, source);
  return { name: checked.name, path, source, previous };
}

/** Undoes a write: puts the previous content back, or removes the new file. Never throws. */
export async function undoWrite(written: Pick<WrittenTool, "path" | "previous">): Promise<void> {
  try {
    if (written.previous === null) await unlink(written.path);
    else await writeFileAtomic(written.path, written.previous);
  } catch {
    // best effort: the caller reports why it undid the write
  }
}

/**
 * Writes the tool, loads it back and hands it to `accept` (e.g. to register it). When loading or
 * `accept` fails, the write is undone and the error says so: nothing half-done is left behind.
 */
export async function writeAndLoadTool(
  draft: unknown,
  options: WriteGeneratedToolOptions,
  accept: (tool: Tool, written: WrittenTool) => void = () => {},
): Promise<{ written: WrittenTool; tool: Tool }> {
  const written = await writeGeneratedTool(draft, options);
  try {
    const tool = await loadToolFile(written.path);
    if (tool.name !== written.name) throw new Error(`it defines "${tool.name}" instead of "${written.name}"`);
    accept(tool, written);
    return { written, tool };
  } catch (error) {
    await undoWrite(written);
    throw new Error(`the tool was written but failed to load, so the write was undone: ${errorMessage(error)}`);
  }
}

/** Builds the source of a draft whose fields were checked; no syntax check. */
export function generateToolSource(draft: ToolDraft): GeneratedSource {
  const lines: string[] = [
    "// Generated by yiem (writeTool or `yiem tools new`). Code bodies are the author's; every other value is data.",
    'import { defineTool, textContent, toolResult } from "yiem";',
    "",
    "export default defineTool({",
    `  name: ${literal(draft.name)},`,
    `  label: ${literal(draft.label)},`,
    `  description: ${literal(draft.description)},`,
    ...`  inputSchema: ${literal(draft.inputSchema, 2).replaceAll("\n", "\n  ")},`.split("\n"),
    `  parallelToolExecute: ${draft.parallel === false ? "false" : "true"},`,
  ];
  const parts: GeneratedSource["parts"] = [];
  const addBody = (field: CodeField, signature: string, code: string) => {
    lines.push(`  ${signature} {`);
    const body = normalizeNewlines(code).split("\n");
    parts.push({ field, firstLine: lines.length + 1, lines: body.length });
    lines.push(...body, "  },");
  };
  if (draft.prepareCode !== undefined) addBody("prepareCode", "async prepareArguments(args: any): Promise<any>", draft.prepareCode);
  if (draft.validateCode !== undefined) {
    addBody("validateCode", "async validateRequiredArgs(args: any): Promise<string | undefined | void>", draft.validateCode);
  }
  addBody(
    "executeCode",
    "async execute(toolCallId: string, args: any, signal: AbortSignal, onPartialResult: (partial: any) => void): Promise<any>",
    draft.executeCode,
  );
  lines.push("});", "");
  return { source: lines.join("\n"), parts };
}

/** Field types and sizes of a draft from an untrusted caller. */
export function checkDraftShape(draft: unknown): ToolDraft {
  if (draft === null || typeof draft !== "object" || Array.isArray(draft)) throw new ToolDraftError("the tool draft must be an object");
  const d = draft as Record<string, unknown>;
  checkToolName(d.name);
  const text = (key: "label" | "description", max: number): string => {
    const value = d[key];
    if (typeof value !== "string" || value.trim() === "") throw new ToolDraftError(`"${key}" must be a non-empty string`);
    if (value.length > max) throw new ToolDraftError(`"${key}" is ${value.length} characters long; at most ${max} are allowed`);
    return value;
  };
  const code = (key: CodeField, required: boolean): string | undefined => {
    const value = d[key];
    if (value === undefined || (value === null && !required) || (value === "" && !required)) {
      if (required) throw new ToolDraftError(`"${key}" is required: the body of the function, as a string`);
      return undefined;
    }
    if (typeof value !== "string") throw new ToolDraftError(`"${key}" must be a string holding a function body`);
    if (value.length > LIMITS.code) throw new ToolDraftError(`"${key}" is ${value.length} characters long; at most ${LIMITS.code} are allowed`);
    if (required && value.trim() === "") throw new ToolDraftError(`"${key}" must not be empty`);
    return value;
  };
  if (d.parallel !== undefined && typeof d.parallel !== "boolean") throw new ToolDraftError(`"parallel" must be true or false when given`);
  const schema = d.inputSchema;
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    throw new ToolDraftError(`"inputSchema" must be a JSON Schema object such as {"type":"object","properties":{…}}`);
  }
  return {
    name: d.name as string,
    label: text("label", LIMITS.label),
    description: text("description", LIMITS.description),
    inputSchema: schema as JsonSchema,
    executeCode: code("executeCode", true) as string,
    validateCode: code("validateCode", false),
    prepareCode: code("prepareCode", false),
    parallel: d.parallel as boolean | undefined,
  };
}

/** Throws unless `name` is a usable new tool name (pattern, not a built-in). */
export function checkToolName(name: unknown): asserts name is string {
  if (typeof name !== "string" || !GENERATED_TOOL_NAME_PATTERN.test(name)) {
    const shown = typeof name === "string" ? JSON.stringify(name) : typeof name;
    throw new ToolDraftError(
      `invalid tool name ${shown}: it must start with a letter and have only letters, digits and "_" (at most 64 characters)`,
    );
  }
  if (BUILTIN_TOOL_NAMES.includes(name)) throw new ToolDraftError(`"${name}" is the name of a built-in tool; choose another name`);
}

/** Throws unless `schema` is an object schema ajv compiles (and has no `__proto__` key). */
export async function checkInputSchema(schema: unknown): Promise<void> {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    throw new ToolDraftError(`"inputSchema" must be a JSON Schema object such as {"type":"object","properties":{…}}`);
  }
  if ((schema as JsonSchema).type !== "object") throw new ToolDraftError(`"inputSchema.type" must be "object" (tool arguments are an object)`);
  const badKey = findProtoKey(schema, "inputSchema");
  if (badKey) throw new ToolDraftError(`"${badKey}" is not allowed in a schema`);
  let copy: JsonSchema;
  try {
    copy = JSON.parse(JSON.stringify(schema)) as JsonSchema;
  } catch (error) {
    throw new ToolDraftError(`"inputSchema" is not JSON: ${(error as Error).message}`);
  }
  try {
    await checkSchema(copy);
  } catch (error) {
    throw new ToolDraftError(`"inputSchema" is not a valid JSON Schema: ${(error as Error).message}`);
  }
}

function findProtoKey(value: unknown, path: string): string | null {
  if (value === null || typeof value !== "object") return null;
  for (const key of Object.keys(value)) {
    if (key === "__proto__") return `${path}.__proto__`;
    const found = findProtoKey((value as Record<string, unknown>)[key], `${path}.${key}`);
    if (found) return found;
  }
  return null;
}

/** Generates the source and checks that every code body and the whole file parse (modules/syntax.ts: nothing runs). */
export async function generateCheckedSource(draft: ToolDraft): Promise<GeneratedSource> {
  for (const field of ["prepareCode", "validateCode", "executeCode"] as const) {
    const code = draft[field];
    if (code === undefined) continue;
    const error = findSyntaxProblem(normalizeNewlines(code), `${field}.ts`, { bodyOnly: true });
    if (error) throw new ToolDraftError(`${field} ${describeError(error, normalizeNewlines(code), 0)}`);
  }
  const generated = generateToolSource(draft);
  const error = findSyntaxProblem(generated.source, `${draft.name}.ts`, { bodyOnly: false });
  if (error) {
    const part = generated.parts.find((p) => error.line >= p.firstLine && error.line < p.firstLine + p.lines);
    if (!part) throw new ToolDraftError(`the generated tool does not compile: line ${error.line}: ${error.message}`);
    const code = normalizeNewlines(draft[part.field] ?? "");
    throw new ToolDraftError(`${part.field} ${describeError(error, code, part.firstLine - 1)}`);
  }
  return generated;
}

/** `line 3, column 5: message (the code does not compile)` plus the offending line, relative to the field's code. */
function describeError(error: SyntaxProblem, code: string, lineOffset: number): string {
  const line = error.line - lineOffset;
  const text = code.split("\n")[line - 1];
  const excerpt = text === undefined ? "" : `\n  ${line} | ${text.length > 200 ? `${text.slice(0, 200)}…` : text}`;
  return `line ${line}, column ${error.column + 1}: ${error.message.replace(/\.$/, "")} (the code does not compile)${excerpt}`;
}

/**
 * Resolves `<dir>/<file>` for each file name and checks they may be written: the folder is no
 * symbolic link (it is created when missing), no file is a link or a non-file, the name collides
 * with no loaded tool or other tool file, and an existing target needs `overwrite`.
 * Returns the absolute real paths, in order.
 */
export async function prepareTarget(
  dir: string,
  name: string,
  fileNames: string[],
  options: Omit<WriteGeneratedToolOptions, "dir">,
): Promise<string[]> {
  const hint = options.overwriteHint ?? '"overwrite": true';
  const folder = resolve(dir);
  const link = await lstat(folder).catch(() => null);
  if (link?.isSymbolicLink()) {
    const real = await realpath(folder).catch(() => "(a missing target)");
    throw new ToolDraftError(`the tool folder ${folder} is a symbolic link to ${real}; refusing to write through it (name the real folder instead)`);
  }
  if (link && !link.isDirectory()) throw new ToolDraftError(`${folder} is not a folder`);
  if (!link) await mkdir(folder, { recursive: true });
  const realDir = await realpath(folder);
  const targets = fileNames.map((f) => join(realDir, f));
  for (const target of targets) {
    const rel = relative(realDir, target);
    if (rel === "" || rel.startsWith("..") || isAbsolute(rel) || rel.includes(sep)) {
      throw new ToolDraftError(`refusing to write ${target}: it is not directly inside ${realDir}`);
    }
  }

  const existing = options.registry?.entry(name);
  if (existing) {
    if (existing.source.kind === "builtin") throw new ToolDraftError(`"${name}" is a built-in tool and cannot be replaced`);
    const where = existing.source.path ?? existing.source.kind;
    if (!options.overwrite) throw new ToolDraftError(`a tool named "${name}" already exists (${where}); choose another name, or pass ${hint} to replace it`);
    const existingReal = existing.source.path ? await realpath(existing.source.path).catch(() => existing.source.path) : undefined;
    if (!existingReal || !targets.includes(existingReal)) {
      throw new ToolDraftError(`the tool "${name}" is defined in ${where}, not in ${targets[0]}; it can only be replaced where it is written`);
    }
  }

  const entries = await readdir(realDir);
  const wanted = new Set(fileNames.map((f) => f.toLowerCase()));
  for (const entry of entries) {
    const lower = entry.toLowerCase();
    if (wanted.has(lower)) {
      if (!fileNames.includes(entry)) throw new ToolDraftError(`${join(realDir, entry)} exists and differs from ${name} only in letter case`);
      const stats = await lstat(join(realDir, entry));
      if (stats.isSymbolicLink()) throw new ToolDraftError(`${join(realDir, entry)} is a symbolic link; refusing to replace it`);
      if (!stats.isFile()) throw new ToolDraftError(`${join(realDir, entry)} exists and is not a file`);
      if (!options.overwrite) throw new ToolDraftError(`${join(realDir, entry)} already exists; choose another name, or pass ${hint} to replace it`);
    } else if (isSiblingToolFile(lower, name.toLowerCase())) {
      throw new ToolDraftError(`${join(realDir, entry)} already holds a tool file named "${name}"; remove it or choose another name`);
    }
  }
  return targets;
}

const SIBLING_SUFFIXES = [".ts", ".mts", ".js", ".mjs", ".tool.yaml", ".tool.yml", ".tool.json"];

function isSiblingToolFile(entryLower: string, nameLower: string): boolean {
  return SIBLING_SUFFIXES.some((suffix) => entryLower === nameLower + suffix);
}

/** A JS literal for a JSON value, with U+2028/U+2029 escaped so no reader sees a line break. */
function literal(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(/[\u2028\u2029]/g, (c) => (c === "\u2028" ? "\\u2028" : "\\u2029"));
}

/** `\r\n` and `\r` become `\n` (U+2028 is kept: it may sit inside a string literal). */
function normalizeNewlines(code: string): string {
  return code.replace(/\r\n?/g, "\n");
}
