/**
 * A throwaway project for compatibility tests through the real CLI: two TS tools (`shout`
 * upper-cases `text`, `count` gives its length) and a spec whose model points at a scripted
 * server (`${TEST_BASE_URL}`), with extra model keys per project.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { startChatServer, type ChatServer } from "./chat-server.js";
import { assertEventStream, type CliResult } from "./cli.js";
import { runCliInProcess } from "./cli-in-process.js";

const SHOUT = `import { defineTool, toolResult } from "yiem";
export default defineTool({
  name: "shout", label: "Shout", description: "Upper-cases a text",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  async execute(_id, args) { return toolResult(String(args.text).toUpperCase()); },
});
`;
const COUNT = `import { defineTool, toolResult } from "yiem";
export default defineTool({
  name: "count", label: "Count", description: "Length of a text",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  async execute(_id, args) { return toolResult(String(String(args.text).length)); },
});
`;

export interface CompatProject {
  dir: string;
  /** `yiem run PROMPT ...args` against `server`; the event stream is checked against the schema. */
  run(server: ChatServer, prompt?: string, args?: string[]): Promise<CliResult & { end: Record<string, any> }>;
  remove(): Promise<void>;
}

export async function compatProject(model: Record<string, unknown> = {}): Promise<CompatProject> {
  const dir = await mkdtemp(join(tmpdir(), "yiem-compat-"));
  await mkdir(join(dir, "tools"), { recursive: true });
  await writeFile(join(dir, "tools", "shout.ts"), SHOUT);
  await writeFile(join(dir, "tools", "count.ts"), COUNT);
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "compat-fixture", private: true }));
  const spec = {
    model: { name: "test-model", baseURL: "${TEST_BASE_URL}", apiKeyEnv: "TEST_API_KEY", maxRetries: 0, timeoutMs: "5s", ...model },
    toolDirs: ["tools"],
    limits: { maxTurns: 5 },
  };
  await writeFile(join(dir, "agent.config.yaml"), `${JSON.stringify(spec, null, 2)}\n`);
  return {
    dir,
    async run(server, prompt = "go", args = []) {
      const result = await runCliInProcess(["run", prompt, ...args], { cwd: dir, env: { TEST_BASE_URL: server.url, TEST_API_KEY: "sk-compat-test" } });
      assertEventStream(result.events);
      return Object.assign(result, { end: result.events.at(-1) as Record<string, any> });
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

export interface CompatProjects {
  /** The default project (streaming). */
  readonly streaming: CompatProject;
  /** The same with `model.stream: false`. */
  readonly plain: CompatProject;
  /** Starts a scripted server, closed after the test. */
  serve(...args: Parameters<typeof startChatServer>): Promise<ChatServer>;
}

/** Both projects for a test file: made before its tests, removed after them; each test's servers closed after it. */
export function useCompatProjects(): CompatProjects {
  let streaming: CompatProject | undefined;
  let plain: CompatProject | undefined;
  const servers: ChatServer[] = [];
  beforeAll(async () => {
    streaming = await compatProject();
    plain = await compatProject({ stream: false });
  });
  afterAll(async () => {
    await streaming?.remove();
    await plain?.remove();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return {
    get streaming() {
      return streaming!;
    },
    get plain() {
      return plain!;
    },
    async serve(...args) {
      const server = await startChatServer(...args);
      servers.push(server);
      return server;
    },
  };
}
