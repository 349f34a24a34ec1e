/**
 * `yiem tools new --command`: scaffolds a command tool, `<name>.tool.yaml` plus an executable
 * example script `<name>.sh` (bash; reads the JSON arguments from stdin, reports progress on
 * stderr, prints the result on stdout). Same checks as the generator (name, collisions, schema,
 * no symbolic links); user strings reach the manifest only through the YAML serialiser. The
 * script is written first, so a manifest never names a missing script.
 */
import { writeFileAtomic } from "../atomic-write.js";
import { checkInputSchema, checkToolName, prepareTarget, ToolDraftError } from "./generator.js";
import type { ToolRegistry } from "./registry.js";
import type { JsonSchema } from "./types.js";

export interface CommandToolDraft {
  name: string;
  label: string;
  description: string;
  inputSchema: JsonSchema;
  parallel?: boolean;
}

export interface ScaffoldOptions {
  dir: string;
  registry?: ToolRegistry;
  overwrite?: boolean;
  overwriteHint?: string;
}

export interface ScaffoldedCommandTool {
  name: string;
  /** Absolute real paths. */
  manifestPath: string;
  scriptPath: string;
}

/** Checks the draft, then writes the manifest and the script atomically. Throws `ToolDraftError`. */
export async function scaffoldCommandTool(draft: CommandToolDraft, options: ScaffoldOptions): Promise<ScaffoldedCommandTool> {
  checkToolName(draft.name);
  for (const key of ["label", "description"] as const) {
    if (typeof draft[key] !== "string" || draft[key].trim() === "") throw new ToolDraftError(`"${key}" must be a non-empty string`);
  }
  await checkInputSchema(draft.inputSchema);
  const { stringify } = await import("yaml");
  const script = `${draft.name}.sh`;
  const manifest = {
    name: draft.name,
    label: draft.label,
    description: draft.description,
    inputSchema: draft.inputSchema,
    command: ["bash", script],
    cwd: ".",
    timeoutMs: 30_000,
    parallelToolExecute: draft.parallel !== false,
    output: "text",
  };
  const manifestText =
    "# A command tool (see docs/tools.md): the arguments arrive as JSON on stdin (and in $YIEM_TOOL_ARGS),\n" +
    "# stdout is the result, each stderr line a progress update, a non-zero exit an error.\n" +
    "# output: text keeps stdout plain text even when it looks like JSON; `result` lets a JSON {content, …} be the result.\n" +
    stringify(manifest, { lineWidth: 0 });
  const [manifestPath, scriptPath] = await prepareTarget(options.dir, draft.name, [`${draft.name}.tool.yaml`, script], options);
  await writeFileAtomic(scriptPath, exampleScript(), { mode: 0o755 });
  await writeFileAtomic(manifestPath, manifestText);
  return { name: draft.name, manifestPath, scriptPath };
}

/** A working bash example: echoes the arguments it received. No user text is embedded. */
function exampleScript(): string {
  return [
    "#!/usr/bin/env bash",
    "# Example command tool script: replace the body with your own work.",
    "# Input: the tool's arguments as one JSON object on stdin.",
    "# Output: stdout is the result text; stderr lines are progress; exit non-zero to report an error.",
    "set -euo pipefail",
    "",
    'args="$(cat)"',
    'echo "received the arguments" >&2',
    'printf \'Received arguments: %s\\n\' "$args"',
    "",
  ].join("\n");
}
