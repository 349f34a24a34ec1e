/**
 * Files the benchmarks run against, written into a fresh temporary folder: small TypeScript tools
 * (importing `yiem` as any tool file does), 500 generated tools, and agent specs pointing at a
 * local server. Nothing is written inside the repository.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function createWorkspace() {
  const root = mkdtempSync(join(tmpdir(), "yiem-bench-"));
  return {
    root,
    path: (...parts) => join(root, ...parts),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

const NOOP_TOOL = `import { defineTool, toolResult } from "yiem";

export default defineTool({
  name: "noop",
  label: "No-op",
  description: "Answers ok at once.",
  inputSchema: { type: "object", properties: { i: { type: "integer" } }, additionalProperties: false },
  async execute() {
    return toolResult("ok");
  },
});
`;

const SLEEP_TOOL = `import { defineTool, toolResult } from "yiem";

export default defineTool({
  name: "sleep",
  label: "Sleep",
  description: "Waits the given milliseconds, then answers.",
  inputSchema: { type: "object", properties: { ms: { type: "integer", minimum: 0 }, tag: { type: "integer" } }, required: ["ms"] },
  parallelToolExecute: true,
  async execute(_id, args: { ms: number }) {
    await new Promise((resolve) => setTimeout(resolve, args.ms));
    return toolResult(\`slept \${args.ms} ms\`);
  },
});
`;

const SPAM_TOOL = `import { defineTool, toolResult } from "yiem";

export default defineTool({
  name: "spam",
  label: "Spam",
  description: "Reports the given number of partial results, then answers.",
  inputSchema: { type: "object", properties: { count: { type: "integer", minimum: 0 } }, required: ["count"] },
  async execute(_id, args: { count: number }, _signal, onPartialResult) {
    for (let i = 1; i <= args.count; i++) onPartialResult?.(\`progress \${i}\`);
    return toolResult(\`sent \${args.count}\`);
  },
});
`;

function generatedTool(n) {
  const name = `tool${String(n).padStart(3, "0")}`;
  return `import { defineTool, toolResult } from "yiem";

interface Args {
  text: string;
  times?: number;
}

export default defineTool<Args>({
  name: "${name}",
  label: "Generated tool ${n}",
  description: "Generated benchmark tool number ${n}: repeats a text.",
  inputSchema: {
    type: "object",
    properties: { text: { type: "string" }, times: { type: "integer", minimum: 1, default: 1 } },
    required: ["text"],
  },
  async execute(_id, args: Args) {
    return toolResult(args.text.repeat(args.times ?? 1));
  },
});
`;
}

/** Writes one tool folder per kind and returns their paths. */
export function writeTools(ws) {
  const dirs = { noop: ws.path("tools-noop"), sleep: ws.path("tools-sleep"), spam: ws.path("tools-spam"), many: ws.path("tools-500") };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  writeFileSync(join(dirs.noop, "noop.ts"), NOOP_TOOL);
  writeFileSync(join(dirs.sleep, "sleep.ts"), SLEEP_TOOL);
  writeFileSync(join(dirs.spam, "spam.ts"), SPAM_TOOL);
  for (let n = 1; n <= 500; n++) writeFileSync(join(dirs.many, `tool${String(n).padStart(3, "0")}.ts`), generatedTool(n));
  return dirs;
}

/**
 * An agent spec for a run against `baseURL` with the tools of `toolDir` and no built-ins.
 * `stream` as given (the benchmarks use the default, streaming).
 */
export function writeSpec(ws, fileName, { baseURL, toolDir, toolExecution = "sequential", maxTurns = 1000, stream = true }) {
  const file = ws.path(fileName);
  writeFileSync(file, [
    "name: bench",
    "systemPrompt: You are a benchmark.",
    "model:",
    "  name: bench-model",
    `  baseURL: ${baseURL}`,
    `  stream: ${stream}`,
    "  maxRetries: 0",
    `toolDirs: [${JSON.stringify(toolDir)}]`,
    "builtinTools: []",
    `toolExecution: ${toolExecution}`,
    "limits:",
    `  maxTurns: ${maxTurns}`,
    "  toolTimeoutMs: 60s",
    "  maxConcurrency: 8",
    "",
  ].join("\n"));
  return file;
}
