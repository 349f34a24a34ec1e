/**
 * Running a composite action's steps the way a GitHub runner does, on this machine: each `run:`
 * with `bash --noprofile --norc -eo pipefail FILE`, in the step's `working-directory`, with the
 * variables a runner sets (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_ACTION_PATH, RUNNER_TEMP,
 * GITHUB_WORKSPACE, CI, GITHUB_ACTIONS) and the step's `env:` with its `${{ … }}` expressions
 * substituted by a small evaluator that knows `inputs.*` (with the action's defaults),
 * `github.action_path`, `github.workspace` and `matrix.*`; any other expression fails the test
 * rather than being guessed. Also reads GITHUB_OUTPUT files (`name=value` and `name<<DELIM`).
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { parse } from "yaml";

export interface ActionStep {
  name?: string;
  id?: string;
  shell?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
  "working-directory"?: string;
  with?: Record<string, string>;
}

export interface ActionFile {
  inputs?: Record<string, { default?: string; required?: boolean }>;
  outputs?: Record<string, { value: string }>;
  runs: { using: string; steps: ActionStep[] };
}

export interface ExpressionContext {
  inputs?: Record<string, string>;
  github?: Record<string, string>;
  matrix?: Record<string, string | number>;
}

export async function readYaml<T>(file: string): Promise<T> {
  return parse(await readFile(file, "utf8")) as T;
}

/** `text` with every `${{ expr }}` replaced from `context` (module rules). */
export function substitute(text: string, context: ExpressionContext): string {
  return text.replace(/\$\{\{\s*([^}]*?)\s*\}\}/g, (_all, expr: string) => {
    const path = /^(inputs|github|matrix)\.([\w-]+)$/.exec(expr);
    if (!path) throw new Error(`the test evaluator does not know the expression \${{ ${expr} }}`);
    const scope = context[path[1] as keyof ExpressionContext] as Record<string, unknown> | undefined;
    const value = scope?.[path[2]];
    if (value === undefined) throw new Error(`\${{ ${expr} }} has no value in this test`);
    return String(value);
  });
}

/** The action's inputs: its defaults, overridden by `given` (names must be declared). */
export function actionInputs(action: ActionFile, given: Record<string, string>): Record<string, string> {
  const declared = action.inputs ?? {};
  for (const name of Object.keys(given)) if (!(name in declared)) throw new Error(`input "${name}" is not declared in action.yml`);
  return Object.fromEntries(Object.entries(declared).map(([name, spec]) => [name, given[name] ?? spec.default ?? ""]));
}

export interface RunnerFiles {
  temp: string;
  output: string;
  summary: string;
  workspace: string;
}

/** A fresh RUNNER_TEMP with empty GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files. */
export async function runnerFiles(workspace: string): Promise<RunnerFiles> {
  const temp = await mkdtemp(join(tmpdir(), "yiem-runner-"));
  const files = { temp, output: join(temp, "github_output"), summary: join(temp, "step_summary"), workspace };
  await writeFile(files.output, "");
  await writeFile(files.summary, "");
  return files;
}

export interface StepResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one `run:` step (module rules); `env` adds to the runner's variables (e.g. PATH). */
export async function runStep(step: ActionStep, context: ExpressionContext & { github: Record<string, string> }, files: RunnerFiles, env: Record<string, string> = {}): Promise<StepResult> {
  if (step.run === undefined) throw new Error(`step ${step.name ?? step.uses} has no run:`);
  if (step.shell !== "bash") throw new Error(`step ${step.name} must say shell: bash`);
  const script = join(files.temp, `step-${Math.random().toString(36).slice(2)}.sh`);
  await writeFile(script, step.run);
  const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([key, value]) => [key, substitute(String(value), context)]));
  const dir = step["working-directory"] === undefined ? files.workspace : substitute(step["working-directory"], context);
  const cwd = isAbsolute(dir) ? dir : resolve(files.workspace, dir);
  const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", script], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? files.temp,
      CI: "true",
      GITHUB_ACTIONS: "true",
      GITHUB_OUTPUT: files.output,
      GITHUB_STEP_SUMMARY: files.summary,
      GITHUB_ACTION_PATH: context.github.action_path,
      GITHUB_WORKSPACE: files.workspace,
      RUNNER_TEMP: files.temp,
      ...env,
      ...stepEnv,
    },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const code = await new Promise<number | null>((done) => child.on("close", (exitCode) => done(exitCode)));
  return { code, stdout, stderr };
}

/** The outputs written to a GITHUB_OUTPUT file; a block without its closing delimiter fails. */
export function parseOutputs(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line === "") continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2], i + 1);
      if (end < 0) throw new Error(`output ${heredoc[1]}: no closing delimiter`);
      outputs[heredoc[1]] = lines.slice(i + 1, end).join("\n");
      i = end;
      continue;
    }
    const eq = line.indexOf("=");
    if (eq < 0) throw new Error(`not an output line: ${JSON.stringify(line)}`);
    outputs[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return outputs;
}
