/**
 * MCP test helpers: the reference server (`@modelcontextprotocol/server-everything`, started with
 * `node` from node_modules, never npx), the fixture servers of test/fixtures/mcp/, projects with
 * an `mcpServers` spec, and checks that no server process outlived a run.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "./cli.js";

export const everythingEntry = join(repoRoot, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
export const fixtureServer = join(repoRoot, "test", "fixtures", "mcp", "server.mjs");
export const fixtureWrapper = join(repoRoot, "test", "fixtures", "mcp", "wrapper.mjs");

/** The reference server over stdio, as a spec entry. */
export const everythingStdio = (extra: Record<string, unknown> = {}) => ({ command: [process.execPath, everythingEntry, "stdio"], ...extra });
/** A fixture server in `mode`, as a spec entry. */
export const fixture = (mode: string, extra: Record<string, unknown> = {}) => ({ command: [process.execPath, fixtureServer, mode], ...extra });

/** A temp project whose agent.config.yaml (JSON is YAML) points the model at `TEST_BASE_URL`. */
export async function mcpProject(spec: Record<string, unknown>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "yiem-mcp-"));
  const full = {
    model: { name: "test-model", baseURL: "${TEST_BASE_URL:-http://127.0.0.1:9/v1}", apiKeyEnv: "TEST_API_KEY", maxRetries: 0, timeoutMs: "10s" },
    ...spec,
  };
  await writeFile(join(dir, "agent.config.yaml"), `${JSON.stringify(full, null, 2)}\n`);
  return dir;
}

/** Whether a process with this pid is alive. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until none of `pids` is alive (a group being ended may take the kill grace period). */
export async function waitGone(pids: number[], ms = 5000): Promise<number[]> {
  const deadline = Date.now() + ms;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    alive = alive.filter(isAlive);
  }
  return alive;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The reference server over Streamable HTTP on 127.0.0.1; resolves once it listens. */
export async function startEverythingHttp(): Promise<{ url: string; child: ChildProcess; close(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [everythingEntry, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not listen: ${stderr}`)), 20_000);
    child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      if (/listening on port/i.test(stderr)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => reject(new Error(`server-everything exited (${code}): ${stderr}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    child,
    close: () => new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    }),
  };
}
