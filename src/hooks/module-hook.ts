/**
 * Module hooks: a TS/JS file whose default export is the hook function (for the slot it is
 * configured in) or an object with `beforeToolCall` / `afterToolCall`; named exports of those
 * names are accepted when there is no default export. Rules: the hook gets the library
 * context (`AgentHooks` in src/loop/types.ts) with a signal that also aborts on the hook's
 * timeout; a timeout is a hook failure (thrown).
 */
import { basename } from "node:path";
import { importModuleFile } from "../tools/loader.js";
import type { AgentHooks, BeforeToolCallContext } from "../loop/types.js";
import type { HookName } from "./types.js";
import type { CacheScope } from "../cache-dir.js";

type HookFn = (ctx: BeforeToolCallContext) => unknown;

/** Loads the `hook` function of the module at `path` (absolute), its code cached in `cache`. Throws a clear error. */
export async function loadModuleHook<K extends HookName>(hook: K, path: string, timeoutMs: number, cache?: CacheScope): Promise<NonNullable<AgentHooks[K]>> {
  let mod: Record<string, unknown>;
  try {
    mod = await importModuleFile(path, cache);
  } catch (error) {
    throw new Error(`hooks.${hook}: cannot load ${path}: ${(error as Error).message.split("\n")[0]}`);
  }
  const fn = pickHook(mod, hook);
  if (!fn) {
    throw new Error(`hooks.${hook}: ${path} must default-export a function or an object with a ${hook} function`);
  }
  return withTimeout(hook, basename(path), fn, timeoutMs) as NonNullable<AgentHooks[K]>;
}

function pickHook(mod: Record<string, unknown>, hook: HookName): HookFn | null {
  let exported = mod.default;
  // A CommonJS module exporting `{ default: hook }` nests the default once more.
  if (exported && typeof exported === "object" && "default" in exported && !(hook in exported)) {
    exported = (exported as { default: unknown }).default;
  }
  if (typeof exported === "function") return exported as HookFn;
  if (exported && typeof exported === "object") {
    const fn = (exported as Record<string, unknown>)[hook];
    return typeof fn === "function" ? (fn.bind(exported) as HookFn) : null;
  }
  return typeof mod[hook] === "function" ? (mod[hook] as HookFn) : null;
}

function withTimeout(hook: HookName, name: string, fn: HookFn, timeoutMs: number) {
  return async (ctx: BeforeToolCallContext): Promise<unknown> => {
    if (!(timeoutMs > 0)) return fn(ctx);
    const controller = new AbortController();
    const onAbort = () => controller.abort(ctx.signal.reason);
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener("abort", onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new Error(`${hook} hook ${JSON.stringify(name)} timed out after ${timeoutMs} ms`);
        reject(error);
        controller.abort(error);
      }, timeoutMs);
    });
    try {
      return await Promise.race([Promise.resolve(fn({ ...ctx, signal: controller.signal })), timeout]);
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort);
    }
  };
}
