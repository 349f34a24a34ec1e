/**
 * `yiem init [--dir D] [--example]`. Rules:
 * - plain: a commented agent.config.yaml and tools/countWords.ts, an example tool;
 * - `--example`: the offline demo, copied from this package: its agent.config.yaml, the example
 *   tools (tools/, with their helpers), configs/demo.replay.jsonl and the example specs the
 *   README uses (configs/*.yaml, with configs/generated-tools/ for scaffold.yaml), so that
 *   `yiem run -m replay:configs/demo.replay.jsonl "What time is it in Tokyo?"` runs in D;
 * - what it writes and prints is right for where yiem is installed (./init-paths.ts): the
 *   `$schema` line and the docs path point at this package's files (relative, under the
 *   project's node_modules; else absolute), and the command to try is `npx --no-install yiem`
 *   for a project install, `yiem` otherwise;
 * - never overwrites: when any file to write exists, or a folder it needs is a file, nothing is
 *   written (exit 2);
 * - `--dir` and its missing parents are made; a path that is not a folder, or cannot be made,
 *   is exit 2 naming it; a file that cannot be written is exit 1 naming it;
 * - stdout gets the written paths; stderr a hint: the command to try. (The getTime tool's package,
 *   city-timezones, resolves from D or, failing that, from yiem's own dependencies.)
 */
import { mkdir, readdir, readFile, stat } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { packageRoot } from "../../package-info.js";
import { writeFileAtomic } from "../../atomic-write.js";
import { EXIT } from "../exit-codes.js";
import { reportUsageError } from "../errors.js";
import { installPaths, type InstallPaths } from "./init-paths.js";
import type { CliIo } from "../io.js";

const spec = (where: InstallPaths) => `# yiem agent spec. Every key is described in ${where.file("docs/spec.md")}.
# yaml-language-server: $schema=${where.file("schema/agent.schema.json")}

name: my-agent
systemPrompt: You are a concise assistant. Use the tools when they help.

# Any OpenAI-compatible server. The key is read from the variable named by apiKeyEnv.
# For an offline try-out: ${where.command} run --model replay:FILE "…"
model:
  name: \${YIEM_MODEL:-gpt-4o-mini}
  baseURL: \${OPENAI_BASE_URL:-https://api.openai.com/v1}
  apiKeyEnv: OPENAI_API_KEY
  temperature: 0

toolDirs: [tools]              # loaded alphabetically, folders in order
builtinTools: [listTools]      # add writeTool to let the model write new tools
toolExecution: parallel        # or sequential
# strict: true                 # for CI: a tool, hook or tool glob that is broken is exit 2, not a warning

limits:
  maxTurns: 25
  toolTimeoutMs: 2m
`;

const EXAMPLE_TOOL = `import { defineTool, toolResult } from "yiem";

/** An example tool: counts the words of a text. Edit it, or add more files to this folder. */
export default defineTool({
  name: "countWords",
  label: "Count words",
  description: "Counts the words in a text.",
  inputSchema: {
    type: "object",
    properties: { text: { type: "string", description: "The text to count" } },
    required: ["text"],
    additionalProperties: false,
  },
  async execute(_toolCallId, args: { text: string }) {
    const words = args.text.trim().split(/\\s+/).filter(Boolean).length;
    return toolResult(\`\${words} words\`, { details: { words } });
  },
});
`;

export async function handler(argv: Record<string, unknown>, io: CliIo): Promise<number> {
  const given = String(argv.dir ?? ".");
  const dir = resolve(io.cwd, given);
  const folderProblem = await makeFolder(given, dir);
  if (folderProblem) {
    reportUsageError(io, folderProblem);
    return EXIT.usage;
  }
  const where = installPaths(dir);
  const files = argv.example ? await exampleFiles(where) : [
    { path: "agent.config.yaml", text: spec(where) },
    { path: join("tools", "countWords.ts"), text: EXAMPLE_TOOL },
  ];
  const targets = files.map((file) => ({ ...file, path: join(dir, file.path) }));
  const existing = [];
  for (const { path } of targets) if (await exists(path)) existing.push(path);
  if (existing.length > 0) {
    reportUsageError(io, `init would overwrite ${existing.join(", ")}; nothing was written`);
    return EXIT.usage;
  }
  const notFolders = new Set<string>();
  for (const { path } of targets) {
    for (let parent = dirname(path); parent !== dir && parent.startsWith(dir); parent = dirname(parent)) {
      const found = await stat(parent).catch(() => null);
      if (found && !found.isDirectory()) notFolders.add(parent);
    }
  }
  if (notFolders.size > 0) {
    reportUsageError(io, `init needs ${[...notFolders].join(", ")} to be a folder; nothing was written`);
    return EXIT.usage;
  }
  for (const { path, text } of targets) {
    try {
      await writeFileAtomic(path, text);
    } catch (error) {
      reportUsageError(io, `init could not write ${path}: ${(error as Error).message}`);
      return EXIT.failure;
    }
  }
  const { printText } = await import("../output.js");
  await printText(targets.map(({ path }) => `wrote ${path}`).join("\n"), io.stdout);
  if (argv.example) io.stderr.write(exampleHint(dir, where, io.cwd));
  return EXIT.ok;
}

/**
 * Makes the folder `dir` (`given` as typed) and its missing parents, one level at a time (Node's
 * recursive mkdir never returns where a parent cannot be made, e.g. under /proc). Returns the
 * problem in words, or undefined when the folder exists.
 */
async function makeFolder(given: string, dir: string): Promise<string | undefined> {
  const missing: string[] = [];
  let at = dir;
  for (;;) {
    const found = await stat(at).catch((error: NodeJS.ErrnoException) => (error.code === "ENOENT" || error.code === "ENOTDIR" ? null : error));
    if (found instanceof Error) return `--dir ${JSON.stringify(given)}: cannot use ${at}: ${found.message}`;
    if (found) {
      if (!found.isDirectory()) return `--dir ${JSON.stringify(given)}: ${at} is not a folder`;
      break;
    }
    missing.unshift(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const folder of missing) {
    try {
      await mkdir(folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return `--dir ${JSON.stringify(given)}: cannot create ${folder}: ${(error as Error).message}`;
    }
  }
  return undefined;
}

const GENERATED_TOOLS_GITIGNORE = `# Tools written by writeTool under configs/scaffold.yaml. Review one before moving it to tools/.
*
!.gitignore
`;

/** The demo files of this package, as paths relative to the target folder, their references made right for `where`. */
async function exampleFiles(where: InstallPaths): Promise<Array<{ path: string; text: string }>> {
  const root = packageRoot();
  const files: Array<{ path: string; text: string }> = [];
  const add = async (path: string) => files.push({ path, text: where.adapt(path, await readFile(join(root, path), "utf8")) });
  await add("agent.config.yaml");
  await add(join("configs", "demo.replay.jsonl"));
  for (const name of (await readdir(join(root, "configs"))).filter((n) => n.endsWith(".yaml")).sort()) await add(join("configs", name));
  // scaffold.yaml loads and writes configs/generated-tools/: the folder must exist. (Its
  // .gitignore is written here: npm does not install a package's .gitignore files.)
  files.push({ path: join("configs", "generated-tools", ".gitignore"), text: GENERATED_TOOLS_GITIGNORE });
  for (const file of await filesUnder(join(root, "tools"))) await add(relative(root, file));
  return files;
}

/** Every file under `dir` (recursively, skipping hidden names such as `.yiem-tmp-*`), sorted. */
async function filesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await filesUnder(path)));
    else if (entry.isFile()) found.push(path);
  }
  return found.sort();
}

/** What to run next. */
function exampleHint(dir: string, where: InstallPaths, cwd: string): string {
  const cd = relative(cwd, dir);
  return `yiem: try it offline: ${cd ? `cd ${JSON.stringify(cd)} && ` : ""}${where.command} run -m replay:configs/demo.replay.jsonl "What time is it in Tokyo?"
`;
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
