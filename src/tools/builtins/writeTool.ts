/**
 * The `writeTool` built-in (opt-in): the model writes a new tool at run time. Rules:
 * - the draft goes through the generator's checks (name, collisions, schema, syntax) and is
 *   written atomically to `<writeToolDir>/<name>.ts`; any failure throws, so the model gets an
 *   error result, and nothing is written;
 * - the file is then loaded and registered in the running registry, so the tool is offered from
 *   the next turn; if it fails to load, the write is rolled back (old content back, or file removed);
 * - `overwrite: true` replaces a tool this folder's `<name>.ts` defines, but only when that file
 *   carries the generator's marker (`GENERATED_MARKER` on its first line): a file a person wrote
 *   is never replaced (an error back to the model, nothing written); a built-in never;
 * - the folder is the spec's `writeToolDir`, by default `generated-tools/` beside the spec, which
 *   is loaded after the toolDirs when writeTool is enabled (config/resolve.ts);
 * - never parallel: calls to it run alone;
 * - a name taken by a tool the run's policy removes is refused without naming that tool's file
 *   (nothing tells the model more about a denied tool than about a name that does not exist).
 */
import { toolResult } from "../define.js";
import { GENERATED_TOOL_NAME_PATTERN } from "../define.js";
import type { ToolRegistry } from "../registry.js";
import type { JsonSchema, Tool } from "../types.js";
import type { CacheScope } from "../../cache-dir.js";

export interface WriteToolContext {
  registry: ToolRegistry;
  /** Absolute folder to write into; null disables the tool (every call is an error). */
  writeToolDir: string | null;
  /** Whose module cache the written tool is loaded through (../../cache-dir.ts); default the process's. */
  cache?: CacheScope;
}

export interface WriteToolDetails {
  name: string;
  path: string;
  replaced: boolean;
}

export const WRITE_TOOL_INPUT_SCHEMA: JsonSchema = {
  type: "object",
  properties: {
    name: {
      type: "string",
      pattern: GENERATED_TOOL_NAME_PATTERN.source,
      description: "Tool name: a letter, then letters, digits, _ or - (at most 64). Must not be taken (see listTools).",
    },
    label: { type: "string", minLength: 1, description: "Short human-readable name." },
    description: { type: "string", minLength: 1, description: "What the tool does and when to use it; the model reads this." },
    inputSchema: {
      type: "object",
      description: 'JSON Schema of the arguments; must have "type": "object", e.g. {"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}.',
    },
    executeCode: {
      type: "string",
      minLength: 1,
      description:
        "TypeScript body of `async execute(toolCallId, args, signal, onPartialResult)`. `args` is already validated. " +
        "Return toolResult(text, {details}) or a string; throw an Error to report a failure. " +
        "`toolResult` and `textContent` are in scope; use `await import(\"node:fs/promises\")` for modules (no import statements).",
    },
    validateCode: {
      type: "string",
      description: "Optional body of `async validateRequiredArgs(args)`: return an error message string to reject the arguments, or nothing.",
    },
    prepareCode: {
      type: "string",
      description: "Optional body of `async prepareArguments(args)`: runs before validation; return the (reshaped) arguments object.",
    },
    parallel: { type: "boolean", description: "May calls run in parallel with others? Default true." },
    overwrite: {
      type: "boolean",
      description: "Replace an existing tool of the same name that yiem generated in this folder. Default false. Files written by people are never replaced.",
    },
  },
  required: ["name", "label", "description", "inputSchema", "executeCode"],
  additionalProperties: false,
};

export function createWriteTool(ctx: WriteToolContext): Tool<Record<string, unknown>, WriteToolDetails> {
  return {
    name: "writeTool",
    label: "Write a tool",
    description:
      "Writes a new TypeScript tool and makes it available from your next turn. Give its name, label, description, " +
      "input JSON Schema and the body of its execute function. Check listTools first: names must be new.",
    inputSchema: WRITE_TOOL_INPUT_SCHEMA,
    parallelToolExecute: false,
    async execute(_toolCallId, args, _signal, _onPartial, run) {
      if (!ctx.writeToolDir) throw new Error("writeTool has no folder to write to: set writeToolDir in the agent spec");
      const { overwrite, ...draft } = args;
      const name = typeof draft.name === "string" ? draft.name : "";
      // A name this run cannot see is not revealed: refused like any other taken name.
      if (ctx.registry.has(name) && !(run ? run.isOffered(name) : ctx.registry.isOffered(name))) {
        throw new Error(`a tool named "${name}" cannot be written here; choose another name`);
      }
      // The generator (and with it the syntax checker and ajv) loads only when a tool is written.
      const { writeAndLoadTool } = await import("../generator.js");
      const { written } = await writeAndLoadTool(
        draft,
        { dir: ctx.writeToolDir, registry: ctx.registry, overwrite: overwrite === true, replaceUnmarked: false, cache: ctx.cache },
        (tool, file) => ctx.registry.register(tool, { kind: "file", path: file.path, generated: true }, { replace: file.previous !== null || overwrite === true }),
      );
      const replaced = written.previous !== null;
      return toolResult(
        `${replaced ? "Replaced" : "Wrote"} tool "${written.name}" in ${written.path}. It is available from your next turn.`,
        { details: { name: written.name, path: written.path, replaced } },
      );
    },
  };
}
