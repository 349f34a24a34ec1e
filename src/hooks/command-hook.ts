/**
 * Command hooks: a program decides about a tool call. Rules:
 * - stdin gets `{hook, turn, toolName, toolCallId, args, result?, isError?}` as JSON
 *   (`result` is `{content, details?}`, after the call only); no shell; the environment is
 *   yiem's (the call's `env`: the CLI's io.env) minus secret-looking names (as for command
 *   tools), plus `YIEM_HOOK`;
 * - beforeToolCall: exit 0 allows; exit 2 blocks, with stderr (trimmed) as the reason the model
 *   sees; stdout, when not blank, is JSON `{"args": {...}}` to replace the arguments (or
 *   `{"block": true, "reason": "…"}`);
 * - afterToolCall: exit 0 keeps the result; stdout, when not blank, is JSON with any of
 *   `content` (parts, or a string), `isError`, `terminate`, `details`, `usage` to replace;
 * - any other exit, a signal, a timeout (default 30 s) or stdout that is not such JSON is a
 *   hook failure: thrown, so the loop blocks the call (before) or makes the result an error (after).
 */
import { basename, isAbsolute, resolve } from "node:path";
import { textContent } from "../tools/define.js";
import type { Usage } from "../tools/types.js";
import { childEnv, killGraceMs, runProcess } from "../tools/process.js";
import type { AfterToolCallContext, AfterToolCallResult, BeforeToolCallContext, BeforeToolCallResult } from "../loop/types.js";
import { DEFAULT_HOOK_TIMEOUT_MS, type CommandHookSpec, type HookName } from "./types.js";

const MAX_REASON_CHARS = 4000;

interface HookRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** The beforeToolCall hook of a command spec; `env` is its parent environment (default the process's). */
export function commandBeforeHook(spec: CommandHookSpec, cwd: string, defaultTimeoutMs = DEFAULT_HOOK_TIMEOUT_MS, env: NodeJS.ProcessEnv = process.env) {
  const name = commandName(spec);
  return async (ctx: BeforeToolCallContext): Promise<BeforeToolCallResult> => {
    const run = await runHook("beforeToolCall", spec, { cwd, env, defaultTimeoutMs }, ctx, {});
    if (run.exitCode === 2) {
      const reason = run.stderr.trim().slice(0, MAX_REASON_CHARS);
      return { block: true, reason: reason || `blocked by the beforeToolCall hook ${name}` };
    }
    const out = parseStdout(run.stdout, name, ["args", "block", "reason"]);
    if (!out) return undefined;
    if (out.args !== undefined && !isObject(out.args)) throw new Error(`hook ${name} printed "args" that is not an object`);
    if (out.block !== undefined && typeof out.block !== "boolean") throw new Error(`hook ${name} printed "block" that is not a boolean`);
    if (out.reason !== undefined && typeof out.reason !== "string") throw new Error(`hook ${name} printed "reason" that is not a string`);
    return out as BeforeToolCallResult;
  };
}

/** The afterToolCall hook of a command spec; `env` is its parent environment (default the process's). */
export function commandAfterHook(spec: CommandHookSpec, cwd: string, defaultTimeoutMs = DEFAULT_HOOK_TIMEOUT_MS, env: NodeJS.ProcessEnv = process.env) {
  const name = commandName(spec);
  return async (ctx: AfterToolCallContext): Promise<AfterToolCallResult> => {
    const result = { content: ctx.result.content, ...(ctx.result.details !== undefined ? { details: ctx.result.details } : {}) };
    const run = await runHook("afterToolCall", spec, { cwd, env, defaultTimeoutMs }, ctx, { result, isError: ctx.isError });
    const out = parseStdout(run.stdout, name, ["content", "isError", "terminate", "details", "usage"]);
    if (!out) return undefined;
    const change: NonNullable<AfterToolCallResult> = {};
    if (out.content !== undefined) {
      if (typeof out.content === "string") change.content = [textContent(out.content)];
      else if (Array.isArray(out.content)) change.content = out.content;
      else throw new Error(`hook ${name} printed "content" that is neither a string nor an array of parts`);
    }
    for (const key of ["isError", "terminate"] as const) {
      if (out[key] === undefined) continue;
      if (typeof out[key] !== "boolean") throw new Error(`hook ${name} printed "${key}" that is not a boolean`);
      change[key] = out[key] as boolean;
    }
    if ("details" in out) change.details = out.details;
    if (out.usage !== undefined) change.usage = parseUsage(out.usage, name);
    return change;
  };
}

/** Where a command hook runs: its folder, its parent environment and the default timeout. */
interface HookPlace {
  cwd: string;
  env: NodeJS.ProcessEnv;
  defaultTimeoutMs: number;
}

async function runHook(
  hook: HookName,
  spec: CommandHookSpec,
  { cwd, env, defaultTimeoutMs }: HookPlace,
  ctx: BeforeToolCallContext,
  extra: Record<string, unknown>,
): Promise<HookRun> {
  const name = commandName(spec);
  const timeoutMs = spec.timeoutMs ?? defaultTimeoutMs;
  const input = JSON.stringify({ hook, turn: ctx.turn, toolName: ctx.tool.name, toolCallId: ctx.toolCall.id, args: ctx.args, ...extra });
  const [program, ...rest] = spec.command;
  const stderrLines: string[] = [];
  const outcome = await runProcess({
    command: [isAbsolute(program) || !/[\\/]/.test(program) ? program : resolve(cwd, program), ...rest],
    cwd,
    env: childEnv({ YIEM_HOOK: hook }, env),
    input,
    signal: ctx.signal,
    timeoutMs,
    killGraceMs: killGraceMs(env),
    maxOutputBytes: 1024 * 1024,
    onStderrLine: (line) => {
      if (stderrLines.length < 200) stderrLines.push(line);
    },
  });
  const tail = outcome.stderrTail.trim() ? `: ${outcome.stderrTail.trim().slice(-MAX_REASON_CHARS)}` : "";
  if (outcome.spawnError) throw new Error(`${hook} hook ${name} could not start: ${outcome.spawnError}`);
  if (outcome.timedOut) throw new Error(`${hook} hook ${name} timed out after ${timeoutMs} ms`);
  if (outcome.aborted) throw new Error(`${hook} hook ${name} was aborted`);
  if (outcome.exitCode === null) throw new Error(`${hook} hook ${name} was killed by ${outcome.signal ?? "a signal"}${tail}`);
  const allowedExits = hook === "beforeToolCall" ? [0, 2] : [0];
  if (!allowedExits.includes(outcome.exitCode)) {
    throw new Error(`${hook} hook ${name} failed with exit code ${outcome.exitCode}${tail}`);
  }
  return { exitCode: outcome.exitCode, stdout: outcome.stdout, stderr: stderrLines.join("\n") };
}

/** Blank stdout: null. Otherwise a JSON object whose keys are all in `allowed`, or a throw. */
function parseStdout(stdout: string, name: string, allowed: string[]): Record<string, unknown> | null {
  if (stdout.trim() === "") return null;
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch {
    throw new Error(`hook ${name} printed stdout that is not JSON (print JSON or nothing; log to stderr)`);
  }
  if (!isObject(value)) throw new Error(`hook ${name} printed JSON that is not an object`);
  const unknown = Object.keys(value).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) throw new Error(`hook ${name} printed unknown key "${unknown[0]}" (allowed: ${allowed.join(", ")})`);
  return value;
}

/** `{promptTokens?, completionTokens?, totalTokens?}`, each a non-negative number; else a throw. */
function parseUsage(value: unknown, name: string): Partial<Usage> {
  const keys = ["promptTokens", "completionTokens", "totalTokens"];
  if (!isObject(value)) throw new Error(`hook ${name} printed "usage" that is not an object`);
  for (const [key, n] of Object.entries(value)) {
    if (!keys.includes(key)) throw new Error(`hook ${name} printed unknown usage key "${key}" (allowed: ${keys.join(", ")})`);
    if (typeof n !== "number" || !(n >= 0)) throw new Error(`hook ${name} printed usage "${key}" that is not a non-negative number`);
  }
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The hook as named in messages: the program's file name (no folders, so no paths leak). */
function commandName(spec: CommandHookSpec): string {
  return JSON.stringify(basename(spec.command[0] ?? ""));
}
