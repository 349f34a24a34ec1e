/**
 * Command tools: a `*.tool.yaml|yml|json` manifest turns any program into a tool. Rules:
 * - the manifest must be a regular file (read through regular-file.ts: a FIFO is never waited on);
 * - keys: name, label, description, inputSchema, command (required); cwd, env, timeoutMs,
 *   parallelToolExecute, output (optional); `$schema` is ignored; any other key is an error
 *   naming the file and the key;
 * - `command` is argv (non-empty strings), run without a shell; a relative `command[0]` with a
 *   slash (`./run.sh`) resolves against the manifest's folder, a bare name is looked up on PATH;
 * - `cwd` is relative to the manifest's folder (default: that folder);
 * - `env` values are strings and may use `${VAR}` / `${VAR:-default}` from yiem's environment
 *   (the call's: the CLI's io.env, which is also the parent environment of the child; the
 *   process's own only for a library caller that gives none), by the spec's rule
 *   (../interpolate.ts): an unset `${VAR}` is a load error naming it, except
 *   that a value that is just `${VAR}` with VAR unset leaves the variable out. Listing a secret
 *   variable here is the only way it reaches the child (process.ts `childEnv` withholds it);
 * - a call: the validated args as JSON on stdin and in `YIEM_TOOL_ARGS` (left out above 64 KiB;
 *   stdin always has them), plus `YIEM_TOOL_NAME` and `YIEM_TOOL_CALL_ID`; each stderr line is
 *   a partial result; a non-zero exit, a signal, a timeout or an abort is an error carrying the
 *   exit code and the last stderr lines;
 * - stdout is data: with `output: text` (the default) it is always the result text, even when it
 *   is JSON with `content`, `terminate` or `usage`; only `output: result` makes a JSON object
 *   with a `content` array the result itself (so it may set `details`, `terminate`, `usage`).
 */
import { basename, dirname, isAbsolute, resolve } from "node:path";
import { interpolateEnvMap } from "../interpolate.js";
import { readRegularText } from "../regular-file.js";
import { inputSchemaProblem, textContent } from "./define.js";
import { childEnv, killGraceMs, runProcess, type ProcessOutcome } from "./process.js";
import type { JsonSchema, Tool, ToolResult } from "./types.js";

export interface CommandToolManifest {
  name: string;
  label: string;
  description: string;
  inputSchema: JsonSchema;
  command: string[];
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  parallelToolExecute?: boolean;
  /** How stdout becomes the result: `text` (default) or `result` (a JSON tool result). */
  output?: CommandToolOutput;
}

export type CommandToolOutput = "text" | "result";
const OUTPUT_MODES: readonly CommandToolOutput[] = ["text", "result"];

const REQUIRED_KEYS = ["name", "label", "description", "inputSchema", "command"] as const;
const OPTIONAL_KEYS = ["cwd", "env", "timeoutMs", "parallelToolExecute", "output"] as const;
const IGNORED_KEYS = ["$schema"];
const MAX_ARGS_ENV_BYTES = 64 * 1024;

/** Reads, checks and wraps one manifest (`env`: see module rules). Throws with the file name and the offending key. */
export async function loadCommandTool(file: string, env: NodeJS.ProcessEnv = process.env): Promise<Tool> {
  const manifest = parseCommandManifest(await readManifest(file), file, env);
  return commandTool(manifest, dirname(resolve(file)), env);
}

async function readManifest(file: string): Promise<unknown> {
  const read = await readRegularText(file);
  if ("kind" in read) throw new Error(`not a regular file (${read.kind})`);
  const text = read.text;
  try {
    if (file.endsWith(".json")) return JSON.parse(text);
    const { parse } = await import("yaml");
    return parse(text, { prettyErrors: true });
  } catch (error) {
    throw new Error(`${file}: cannot parse manifest: ${(error as Error).message.split("\n")[0]}`);
  }
}

/** Checks a parsed manifest, its `env` against `source` (see module rules); every message names `file` and the key at fault. */
export function parseCommandManifest(value: unknown, file: string, source: NodeJS.ProcessEnv = process.env): CommandToolManifest {
  const fail = (message: string): never => {
    throw new Error(`${file}: ${message}`);
  };
  if (value === null || typeof value !== "object" || Array.isArray(value)) fail("the manifest must be an object");
  const m = value as Record<string, unknown>;
  for (const key of Object.keys(m)) {
    if (!(REQUIRED_KEYS as readonly string[]).includes(key) && !(OPTIONAL_KEYS as readonly string[]).includes(key) && !IGNORED_KEYS.includes(key)) {
      fail(`unknown key "${key}" (allowed: ${[...REQUIRED_KEYS, ...OPTIONAL_KEYS].join(", ")})`);
    }
  }
  for (const key of REQUIRED_KEYS) if (m[key] === undefined) fail(`missing required key "${key}"`);
  for (const key of ["name", "label", "description"] as const) {
    if (typeof m[key] !== "string") fail(`"${key}" must be a string`);
  }
  const schemaProblem = inputSchemaProblem(m.inputSchema);
  if (schemaProblem) fail(schemaProblem);
  const command = m.command;
  if (!Array.isArray(command) || command.length === 0 || !command.every((a) => typeof a === "string")) {
    fail(`"command" must be a non-empty array of strings (argv, no shell)`);
  }
  if ((command as string[])[0] === "") fail(`"command[0]" must not be empty`);
  if (m.cwd !== undefined && (typeof m.cwd !== "string" || m.cwd === "")) fail(`"cwd" must be a non-empty string`);
  if (m.env !== undefined) {
    const env = m.env as Record<string, unknown>;
    if (env === null || typeof env !== "object" || Array.isArray(env)) fail(`"env" must be an object of strings`);
    for (const [name, v] of Object.entries(env)) {
      if (typeof v !== "string") fail(`"env.${name}" must be a string`);
      if (name === "" || name.includes("=") || name.includes("\0")) fail(`"env" has an invalid variable name ${JSON.stringify(name)}`);
      // The one interpolation rule (../interpolate.ts), checked when the tool loads: \`yiem tools check\` names the variable.
      try {
        interpolateEnvMap({ [name]: v as string }, source);
      } catch (error) {
        fail(`"env.${name}": ${(error as Error).message}`);
      }
    }
  }
  if (m.timeoutMs !== undefined && (typeof m.timeoutMs !== "number" || !Number.isFinite(m.timeoutMs) || m.timeoutMs < 0)) {
    fail(`"timeoutMs" must be a non-negative number`);
  }
  if (m.parallelToolExecute !== undefined && typeof m.parallelToolExecute !== "boolean") {
    fail(`"parallelToolExecute" must be a boolean`);
  }
  if (m.output !== undefined && !OUTPUT_MODES.includes(m.output as CommandToolOutput)) {
    fail(`"output" must be "text" (stdout is the result text, the default) or "result" (stdout is a JSON tool result); got ${JSON.stringify(m.output)}`);
  }
  return m as unknown as CommandToolManifest;
}

/** What a command tool starts: `program` as written in its manifest, resolved as `programProblem` (./program.ts) does. */
export interface CommandToolProgram {
  program: string;
  /** The manifest's folder: a relative `program` resolves against it. */
  baseDir: string;
  /** The PATH the child gets (the manifest's `env` may set it). */
  path: string | undefined;
}

const programs = new WeakMap<Tool, CommandToolProgram>();

/** The program of a tool made by `commandTool`; undefined for any other tool. */
export function commandToolProgram(tool: Tool): CommandToolProgram | undefined {
  return programs.get(tool);
}

/** A tool running `manifest.command`; relative paths resolve against `baseDir`; `parent` is the child's parent environment (see module rules). */
export function commandTool(manifest: CommandToolManifest, baseDir: string, parent: NodeJS.ProcessEnv = process.env): Tool {
  const [program, ...rest] = manifest.command;
  const argv = [resolveProgram(program, baseDir), ...rest];
  const cwd = manifest.cwd === undefined ? baseDir : resolve(baseDir, manifest.cwd);
  const vars = interpolateEnv(manifest.env ?? {}, parent);
  const graceMs = killGraceMs(parent);
  const tool: Tool = {
    name: manifest.name,
    label: manifest.label,
    description: manifest.description,
    inputSchema: manifest.inputSchema,
    async execute(toolCallId, args, signal, onPartialResult) {
      const input = JSON.stringify(args ?? {});
      const env = childEnv({
        ...vars,
        YIEM_TOOL_NAME: manifest.name,
        YIEM_TOOL_CALL_ID: toolCallId,
        ...(Buffer.byteLength(input) <= MAX_ARGS_ENV_BYTES ? { YIEM_TOOL_ARGS: input } : {}),
      }, parent);
      const outcome = await runProcess({
        command: argv,
        cwd,
        env,
        input,
        signal,
        timeoutMs: manifest.timeoutMs,
        killGraceMs: graceMs,
        onStderrLine: (line) => onPartialResult(line),
      });
      const failure = describeFailure(outcome, basename(program), manifest.timeoutMs);
      if (failure) throw new Error(failure);
      return resultFromStdout(outcome, manifest.output ?? "text");
    },
  };
  if (manifest.timeoutMs !== undefined) tool.timeoutMs = manifest.timeoutMs;
  if (manifest.parallelToolExecute !== undefined) tool.parallelToolExecute = manifest.parallelToolExecute;
  programs.set(tool, { program, baseDir, path: vars.PATH ?? parent.PATH });
  return tool;
}

function resolveProgram(program: string, baseDir: string): string {
  if (isAbsolute(program) || !/[\\/]/.test(program)) return program;
  return resolve(baseDir, program);
}

/** The manifest's `env` interpolated (../interpolate.ts `interpolateEnvMap`: a lone unset `${VAR}` is left out). */
export function interpolateEnv(env: Record<string, string>, source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return interpolateEnvMap(env, source);
}

/** Why the run is an error, or null when it exited 0. */
export function describeFailure(outcome: ProcessOutcome, program: string, timeoutMs?: number): string | null {
  const tail = outcome.stderrTail.trim() ? `\nstderr (last lines):\n${outcome.stderrTail.trimEnd()}` : "";
  if (outcome.spawnError) return `cannot run ${program}: ${outcome.spawnError}`;
  if (outcome.timedOut) return `${program} timed out after ${timeoutMs} ms and was killed${tail}`;
  if (outcome.aborted) return `${program} was aborted and killed${tail}`;
  if (outcome.exitCode === 0) return null;
  if (outcome.exitCode !== null) return `${program} exited with code ${outcome.exitCode}${tail}`;
  return `${program} was killed by ${outcome.signal ?? "a signal"}${tail}`;
}

/**
 * stdout as the result text; with `output: result`, a JSON object with a `content` array is the
 * result itself (other stdout is still text).
 */
function resultFromStdout(outcome: ProcessOutcome, output: CommandToolOutput): ToolResult {
  const stdout = outcome.stdout;
  const details = { exitCode: 0, ...(outcome.stdoutCutBytes > 0 ? { stdoutCutBytes: outcome.stdoutCutBytes } : {}) };
  const trimmed = stdout.trim();
  if (output === "result" && outcome.stdoutCutBytes === 0 && trimmed.startsWith("{")) {
    try {
      const parsed = JSON.parse(trimmed) as Record<string, unknown>;
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed) && Array.isArray(parsed.content)) {
        return parsed as unknown as ToolResult;
      }
    } catch {
      // Not JSON: plain text.
    }
  }
  let text = stdout.endsWith("\n") ? stdout.slice(0, -1) : stdout;
  if (outcome.stdoutCutBytes > 0) text += `\n[… output cut: ${outcome.stdoutCutBytes} more bytes not shown]`;
  return { content: [textContent(text)], details };
}
