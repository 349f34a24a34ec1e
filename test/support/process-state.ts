/**
 * Setup file of every test file (vitest.config.ts `setupFiles`). Test files share worker processes
 * (`isolate: false`), so what one file changes of its process must not reach the next: the
 * environment, the working folder, fake timers. Snapshot when the file starts, restore when it ends.
 */
import { afterAll, beforeAll, vi } from "vitest";

let savedEnv: Record<string, string | undefined> = {};
let savedCwd = "";

beforeAll(() => {
  savedEnv = { ...process.env };
  savedCwd = process.cwd();
});

afterAll(() => {
  vi.useRealTimers();
  for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
  for (const [key, value] of Object.entries(savedEnv)) if (value !== undefined) process.env[key] = value;
  if (process.cwd() !== savedCwd) process.chdir(savedCwd);
});
