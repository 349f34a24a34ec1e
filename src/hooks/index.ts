/**
 * `loadSpecHooks`: the spec's `hooks` section as library `AgentHooks`. Rules: a string is a
 * module path (relative ones resolve against `cwd`); `{command, timeoutMs?}` is a command hook
 * run in `cwd` under `env` (the call's environment); every hook has a timeout (default 30 s); loading problems throw, naming the hook.
 */
import { resolve } from "node:path";
import type { AgentHooks } from "../loop/types.js";
import { commandAfterHook, commandBeforeHook } from "./command-hook.js";
import { loadModuleHook } from "./module-hook.js";
import { DEFAULT_HOOK_TIMEOUT_MS, type CommandHookSpec, type HookName, type HookSpec, type LoadSpecHooksOptions, type SpecHooks } from "./types.js";

export async function loadSpecHooks(spec: SpecHooks, opts: LoadSpecHooksOptions = {}): Promise<AgentHooks> {
  const cwd = resolve(opts.cwd ?? process.cwd());
  const timeoutMs = opts.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
  const hooks: AgentHooks = {};
  const [before, after] = await Promise.all([
    spec.beforeToolCall === undefined ? undefined : loadOne("beforeToolCall", spec.beforeToolCall, cwd, timeoutMs, opts),
    spec.afterToolCall === undefined ? undefined : loadOne("afterToolCall", spec.afterToolCall, cwd, timeoutMs, opts),
  ]);
  if (before) hooks.beforeToolCall = before as AgentHooks["beforeToolCall"];
  if (after) hooks.afterToolCall = after as AgentHooks["afterToolCall"];
  return hooks;
}

async function loadOne(hook: HookName, spec: HookSpec, cwd: string, timeoutMs: number, opts: LoadSpecHooksOptions) {
  if (typeof spec === "string") {
    if (spec.trim() === "") throw new Error(`hooks.${hook}: the module path is empty`);
    return loadModuleHook(hook, resolve(cwd, spec), timeoutMs, opts.cache);
  }
  checkCommandSpec(hook, spec);
  const env = opts.env ?? process.env;
  return hook === "beforeToolCall" ? commandBeforeHook(spec, cwd, timeoutMs, env) : commandAfterHook(spec, cwd, timeoutMs, env);
}

function checkCommandSpec(hook: HookName, spec: unknown): asserts spec is CommandHookSpec {
  const s = spec as Record<string, unknown> | null;
  if (!s || typeof s !== "object" || Array.isArray(s)) throw new Error(`hooks.${hook} must be a module path or {command: [argv…]}`);
  const command = s.command;
  if (!Array.isArray(command) || command.length === 0 || !command.every((a) => typeof a === "string") || command[0] === "") {
    throw new Error(`hooks.${hook}.command must be a non-empty array of strings (argv, no shell)`);
  }
  if (s.timeoutMs !== undefined && (typeof s.timeoutMs !== "number" || !(s.timeoutMs >= 0))) {
    throw new Error(`hooks.${hook}.timeoutMs must be a non-negative number`);
  }
}
