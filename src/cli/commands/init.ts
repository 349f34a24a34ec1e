/** `yiem init [--dir D]`: a commented agent.config.yaml and a tools/ folder with one example tool. Never overwrites. */
import { mkdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
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
  const specFile = join(dir, "agent.config.yaml");
  const toolFile = join(dir, "tools", "countWords.ts");
  const existing = [];
  for (const file of [specFile, toolFile]) if (await exists(file)) existing.push(file);
  if (existing.length > 0) {
    reportUsageError(`init would overwrite ${existing.join(" and ")}; nothing was written`);
    return EXIT.usage;
  }
  await mkdir(join(dir, "tools"), { recursive: true });
  await writeFileAtomic(specFile, SPEC);
  await writeFileAtomic(toolFile, EXAMPLE_TOOL);
  const { printText } = await import("../output.js");
  await printText(`wrote ${specFile}\nwrote ${toolFile}`);
  return EXIT.ok;
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
