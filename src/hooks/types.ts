/** Hooks as the agent spec declares them (`hooks.beforeToolCall`, `hooks.afterToolCall`). */
import type { CacheScope } from "../cache-dir.js";

/** A module path (TS/JS, default export) or a command run without a shell. */
export type HookSpec = string | CommandHookSpec;

export interface CommandHookSpec {
  /** argv; `command[0]` is absolute (the config loader resolves it) or a name on PATH. */
  command: string[];
  /** Default 30000. */
  timeoutMs?: number;
}

export type HookName = "beforeToolCall" | "afterToolCall";

export interface SpecHooks {
  beforeToolCall?: HookSpec;
  afterToolCall?: HookSpec;
}

export interface LoadSpecHooksOptions {
  /** Folder relative paths resolve against and command hooks run in (default: process.cwd()). */
  cwd?: string;
  /** Default timeout of every hook, ms (default 30000). */
  timeoutMs?: number;
  /** Whose module cache module hooks load through (../cache-dir.ts: the CLI's io); default the process's. */
  cache?: CacheScope;
  /** The parent environment of command hooks, and their kill grace period's (the CLI's io.env); default the process's. */
  env?: NodeJS.ProcessEnv;
}

export const DEFAULT_HOOK_TIMEOUT_MS = 30_000;
