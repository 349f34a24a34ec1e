/**
 * The throwaway project of the exit-code tests (test/cli/exit-codes, test/e2e/exit-codes): a spec
 * whose model is a scripted server (`${TEST_BASE_URL}`) and the example tools (getTime). Registers
 * its own vitest hooks: the folder for the file, each test's servers closed after it.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll } from "vitest";
import { startChatServer, type ChatServer } from "./chat-server.js";

const TOOLS = fileURLToPath(new URL("../../tools", import.meta.url));

export interface ExitCodeProject {
  /** The project folder (set once the file's hooks ran). */
  readonly dir: string;
  /** Starts a scripted server, closed after the test. */
  serve(script: Parameters<typeof startChatServer>[0]): Promise<ChatServer>;
  /** The environment a run against `server` needs. */
  env(server: ChatServer): Record<string, string>;
}

export function useExitCodeProject(name: string): ExitCodeProject {
  let dir = "";
  const servers: ChatServer[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), `yiem-${name}-`));
    await writeFile(join(dir, "package.json"), JSON.stringify({ name: `${name}-fixture`, private: true }));
    await writeFile(
      join(dir, "agent.config.yaml"),
      ["model:", "  name: test-model", "  baseURL: ${TEST_BASE_URL}", "  apiKeyEnv: TEST_API_KEY", "  maxRetries: 0", `toolDirs: [${JSON.stringify(TOOLS)}]`, ""].join("\n"),
    );
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  return {
    get dir() {
      return dir;
    },
    async serve(script) {
      const server = await startChatServer(script);
      servers.push(server);
      return server;
    },
    env: (server) => ({ TEST_BASE_URL: server.url, TEST_API_KEY: `sk-${name}` }),
  };
}
