/**
 * What a test file may change in its worker process and must not leave behind, since test files
 * share worker processes (vitest.config.ts, `isolate: false`; docs/performance.md, "The test
 * suite's wall time"). Rules:
 * - `captureProcessState()` is taken once per worker, before its first file, and kept on
 *   `globalThis` (a setup file is evaluated again for every file);
 * - `restoreProcessState()` puts back the `process.env` object itself (a file that assigns
 *   `process.env = { ... }` detaches it from the real environment: `os.homedir()` then still reads
 *   the old HOME while code reading `process.env` sees the new one), its variables (vitest's own
 *   `VITEST_*`, which it sets per file, are left as they are), the working folder and real timers.
 */
import { vi } from "vitest";

export interface ProcessState {
  env: NodeJS.ProcessEnv;
  variables: Record<string, string>;
  cwd: string;
}

const OWN_VARIABLES = /^VITEST/;

export function captureProcessState(): ProcessState {
  const variables: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !OWN_VARIABLES.test(name)) variables[name] = value;
  return { env: process.env, variables, cwd: process.cwd() };
}

export function restoreProcessState(state: ProcessState): void {
  if (process.env !== state.env) process.env = state.env;
  for (const name of Object.keys(process.env)) if (!(name in state.variables) && !OWN_VARIABLES.test(name)) delete process.env[name];
  for (const [name, value] of Object.entries(state.variables)) if (process.env[name] !== value) process.env[name] = value;
  if (process.cwd() !== state.cwd) process.chdir(state.cwd);
  vi.useRealTimers();
}
