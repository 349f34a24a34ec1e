/**
 * `yiem tools new <name>`: writes `<dir>/<name>.ts` through the same generator as writeTool, or with
 * `--command` a `<name>.tool.yaml` manifest plus an example script. `--schema`/`--code` take
 * inline JSON/JS or `@file`; with no `--code` the tool echoes its arguments. The folder is
 * `--dir`, else the writeToolDir the spec sets, else the first tool folder (a person reviews what
 * is written there; writeTool's default `generated-tools/` is skipped), else `tools/` beside the
 * spec. The new file must load, or the write is undone. `--force` is a person's explicit request:
 * it replaces an existing file of that name even when yiem did not generate it.
 * stdout: the written path(s), one per line.
 */
import { resolve } from "node:path";
import type { ResolvedSpec } from "../../config/types.js";
import type { JsonSchema } from "../../tools/types.js";
import { createCallSink } from "../events/sink.js";
import type { CliIo } from "../io.js";
import { UsageError } from "../../errors.js";
import { EXIT } from "../exit-codes.js";
import { printText } from "../output.js";
import { loadToolsRegistry, loadToolsSpec, shownPath } from "./tools-context.js";
import { readFlagValue } from "../flag-value.js";
import { callCacheScope } from "../setup.js";

/** The example schema of `tools new` without `--schema`. */
export const EXAMPLE_SCHEMA: JsonSchema = {
  type: "object",
  properties: { text: { type: "string", description: "Any text; the example tool echoes its arguments back." } },
  required: ["text"],
};

/** The example execute body of `tools new` without `--code`. */
export const EXAMPLE_EXECUTE_CODE = [
  "// Example body: replace it with the tool's work. `args` was validated against inputSchema.",
  'onPartialResult("echoing the arguments");',
  "return toolResult(`Received arguments: ${JSON.stringify(args)}`, { details: { toolCallId, args } });",
].join("\n");

export async function newCommand(argv: Record<string, unknown>, io: CliIo): Promise<number> {
  const name = String(argv.name ?? "");
  if (argv.command && argv.code !== undefined) throw new UsageError("--code does not apply to --command (edit the generated script instead)");
  const schema = argv.schema === undefined ? EXAMPLE_SCHEMA : await readSchema(String(argv.schema), io);
  const code = argv.code === undefined ? undefined : await readFlagValue("code", String(argv.code), io);
  const spec = await loadToolsSpec(argv, io);
  const dir = argv.dir !== undefined ? resolve(io.cwd, String(argv.dir)) : defaultNewToolDir(spec);
  const { registry } = await loadToolsRegistry(spec, io);
  const label = argv.label === undefined ? name : String(argv.label);
  const description =
    argv.description !== undefined
      ? String(argv.description)
      : code === undefined
        ? "Echoes its arguments back (an example written by yiem tools new: replace the code and this description)."
        : `The ${name} tool (written by yiem tools new: describe what it does and when to use it).`;
  const parallel = argv.parallel === undefined ? undefined : Boolean(argv.parallel);
  // A person's --force may replace any file of that name; without it no existing file is replaced.
  const common = { dir, registry, overwrite: Boolean(argv.force), replaceUnmarked: true, overwriteHint: "--force", cache: callCacheScope(io) };
  const sink = createCallSink(io);

  if (argv.command) {
    const { scaffoldCommandTool } = await import("../../tools/command-scaffold.js");
    const made = await scaffoldCommandTool({ name, label, description, inputSchema: schema, parallel }, common);
    await printText(`${shownPath(made.manifestPath, io.cwd)}\n${shownPath(made.scriptPath, io.cwd)}`, io.stdout);
    sink.log(`wrote the command tool "${name}"; try: yiem tools call ${name} --args '{"text":"hi"}'`);
    await sink.close();
    return EXIT.ok;
  }

  const { writeAndLoadTool } = await import("../../tools/generator.js");
  const { written } = await writeAndLoadTool({ name, label, description, inputSchema: schema, executeCode: code ?? EXAMPLE_EXECUTE_CODE, parallel }, common);
  await printText(shownPath(written.path, io.cwd), io.stdout);
  sink.log(`wrote the tool "${name}"${code === undefined ? `; try: yiem tools call ${name} --args '{"text":"hi"}'` : ""}`);
  await sink.close();
  return EXIT.ok;
}

/** The spec's own writeToolDir, else the first tool folder that is not writeTool's default one, else `tools/`. */
function defaultNewToolDir(spec: ResolvedSpec): string {
  if (spec.sources.writeToolDir === "spec" && spec.writeToolDir) return spec.writeToolDir;
  return spec.toolDirs.find((dir) => dir !== spec.writeToolDir) ?? resolve(spec.baseDir, "tools");
}

async function readSchema(value: string, io: CliIo): Promise<JsonSchema> {
  const text = await readFlagValue("schema", value, io);
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--schema is not valid JSON: ${(error as Error).message}`);
  }
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) throw new UsageError("--schema must be a JSON object");
  return schema as JsonSchema;
}
