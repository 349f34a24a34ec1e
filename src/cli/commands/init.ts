/**
 * `yiem init [--dir D] [--example]`. Rules:
 * - plain: a commented agent.config.yaml and tools/countWords.ts, an example tool;
 * - `--example`: the offline demo, copied from this package: its agent.config.yaml, the example
 *   tools (tools/, with their helpers) and configs/demo.replay.jsonl, so that
 *   `yiem run -m replay:configs/demo.replay.jsonl "What time is it in Tokyo?"` runs in D;
 * - never overwrites: when any file to write exists, nothing is written (exit 2);
 * - stdout gets the written paths; stderr a hint: the command to try. (The getTime tool's package,
 *   city-timezones, resolves from D or, failing that, from yiem's own dependencies.)
 */
import { mkdir, readdir, readFile, stat } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { packageRoot } from "../../cache-dir.js";
import { writeFileAtomic } from "../../tools/atomic-write.js";
import { EXIT } from "../exit-codes.js";
import { reportUsageError } from "../errors.js";

const SPEC = `# yiem agent spec. Every key is described in docs/spec.md of the yiem package.
# yaml-language-server: $schema=node_modules/yiem/schema/agent.schema.json

name: my-agent
systemPrompt: You are a concise assistant. Use the tools when they help.

# Any OpenAI-compatible server. The key is read from the variable named by apiKeyEnv.
# For an offline try-out: yiem run --model replay:FILE "…"
model:
  name: \${YIEM_MODEL:-gpt-4o-mini}
  baseURL: \${OPENAI_BASE_URL:-https://api.openai.com/v1}
  apiKeyEnv: OPENAI_API_KEY
  temperature: 0

toolDirs: [tools]              # loaded alphabetically, folders in order
builtinTools: [listTools]      # add writeTool to let the model write new tools
toolExecution: parallel        # or sequential

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

export async function handler(argv: Record<string, unknown>): Promise<number> {
  const dir = resolve(String(argv.dir ?? "."));
  const files = argv.example ? await exampleFiles() : [
    { path: "agent.config.yaml", text: SPEC },
    { path: join("tools", "countWords.ts"), text: EXAMPLE_TOOL },
  ];
  const targets = files.map((file) => ({ ...file, path: join(dir, file.path) }));
  const existing = [];
  for (const { path } of targets) if (await exists(path)) existing.push(path);
  if (existing.length > 0) {
    reportUsageError(`init would overwrite ${existing.join(", ")}; nothing was written`);
    return EXIT.usage;
  }
  await mkdir(join(dir, "tools"), { recursive: true });
  for (const { path, text } of targets) await writeFileAtomic(path, text);
  const { printText } = await import("../output.js");
  await printText(targets.map(({ path }) => `wrote ${path}`).join("\n"));
  if (argv.example) process.stderr.write(exampleHint(dir));
  return EXIT.ok;
}

/** The demo files of this package, as paths relative to the target folder. */
async function exampleFiles(): Promise<Array<{ path: string; text: string }>> {
  const root = packageRoot();
  const spec = await readFile(join(root, "agent.config.yaml"), "utf8");
  const files = [
    // The schema line of the package's own spec points into the package; in a project it is under node_modules.
    { path: "agent.config.yaml", text: spec.replace("$schema=./schema/", "$schema=node_modules/yiem/schema/") },
    { path: join("configs", "demo.replay.jsonl"), text: await readFile(join(root, "configs", "demo.replay.jsonl"), "utf8") },
  ];
  for (const file of await filesUnder(join(root, "tools"))) {
    files.push({ path: relative(root, file), text: await readFile(file, "utf8") });
  }
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
function exampleHint(dir: string): string {
  const cd = relative(process.cwd(), dir);
  return `yiem: try it offline: ${cd ? `cd ${JSON.stringify(cd)} && ` : ""}yiem run -m replay:configs/demo.replay.jsonl "What time is it in Tokyo?"
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
