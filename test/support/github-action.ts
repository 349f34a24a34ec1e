/**
 * Running a composite action's steps the way a GitHub runner does, on this machine: each `run:`
 * with `bash --noprofile --norc -eo pipefail FILE` (`shell: bash`; `bash -e FILE` without one), in the step's `working-directory`, with the
 * variables a runner sets (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_ACTION_PATH, RUNNER_TEMP,
 * GITHUB_WORKSPACE, CI, GITHUB_ACTIONS) and the step's `env:` with its `${{ … }}` expressions
 * substituted by a small evaluator that knows `inputs.*` (with the action's defaults),
 * `github.*`, `matrix.*`, `secrets.*` and `env.*`; any other expression fails the test rather
 * than being guessed. Also reads GITHUB_OUTPUT files (`name=value` and `name<<DELIM`), and runs a
 * workflow job's steps in order (`runJob`): `run:` steps as above, `uses:` steps by handlers the
 * test gives (the real actions cannot run here), `if: always()` honoured, lines a step wrote to
 * GITHUB_PATH prepended to PATH for the next steps, as a runner does.
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
  secrets?: Record<string, string>;
  env?: Record<string, string>;
}

export async function readYaml<T>(file: string): Promise<T> {
  return parse(await readFile(file, "utf8")) as T;
}

/** `text` with every `${{ expr }}` replaced from `context` (module rules). */
export function substitute(text: string, context: ExpressionContext): string {
  return text.replace(/\$\{\{\s*([^}]*?)\s*\}\}/g, (_all, expr: string) => {
    const path = /^(inputs|github|matrix|secrets|env)\.([\w-]+)$/.exec(expr);
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
  path: string;
  workspace: string;
}

/** A fresh RUNNER_TEMP with empty GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files. */
export async function runnerFiles(workspace: string): Promise<RunnerFiles> {
  const temp = await mkdtemp(join(tmpdir(), "yiem-runner-"));
  const files = { temp, output: join(temp, "github_output"), summary: join(temp, "step_summary"), path: join(temp, "github_path"), workspace };
  await writeFile(files.output, "");
  await writeFile(files.summary, "");
  await writeFile(files.path, "");
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
  // A workflow step without a shell runs with `bash -e`; `shell: bash` adds pipefail and no rc files.
  if (step.shell !== undefined && step.shell !== "bash") throw new Error(`step ${step.name}: the test runner only knows shell: bash`);
  const bashArgs = step.shell === "bash" ? ["--noprofile", "--norc", "-eo", "pipefail"] : ["-e"];
  const script = join(files.temp, `step-${Math.random().toString(36).slice(2)}.sh`);
  await writeFile(script, step.run);
  const stepEnv = Object.fromEntries(Object.entries({ ...context.env, ...step.env }).map(([key, value]) => [key, substitute(String(value), context)]));
  const dir = step["working-directory"] === undefined ? files.workspace : substitute(step["working-directory"], context);
  const cwd = isAbsolute(dir) ? dir : resolve(files.workspace, dir);
  const child = spawn("bash", [...bashArgs, script], {
    // The step's own env wins over the job's; the runner's variables are set under both.
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? files.temp,
      CI: "true",
      GITHUB_ACTIONS: "true",
      GITHUB_OUTPUT: files.output,
      GITHUB_STEP_SUMMARY: files.summary,
      ...(context.github.action_path ? { GITHUB_ACTION_PATH: context.github.action_path } : {}),
      GITHUB_PATH: files.path,
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

export interface WorkflowJob {
  "runs-on"?: string;
  needs?: string | string[];
  if?: string;
  env?: Record<string, string>;
  strategy?: { "fail-fast"?: boolean; matrix?: Record<string, Array<string | number>> };
  steps: Array<ActionStep & { if?: string }>;
}

export interface Workflow {
  env?: Record<string, string | number>;
  jobs: Record<string, WorkflowJob>;
}

/** What a `uses:` step does in a test: given its `with:` (expressions substituted) and the files. */
export type UsesHandler = (inputs: Record<string, string>, files: RunnerFiles) => Promise<void>;

export interface JobRun {
  /** Each step that ran: its name (or uses), exit code, output. */
  steps: Array<{ name: string; code: number | null; stdout: string; stderr: string }>;
  /** True when every step that ran succeeded. */
  ok: boolean;
}

/** Runs a job's steps in `files.workspace` (module rules); `env` adds to the runner's variables. */
export async function runJob(workflow: Workflow, job: WorkflowJob, context: ExpressionContext, files: RunnerFiles, uses: Record<string, UsesHandler>, env: Record<string, string> = {}): Promise<JobRun> {
  const workflowEnv = Object.fromEntries(Object.entries({ ...workflow.env, ...job.env }).map(([k, v]) => [k, String(v)]));
  const full = { ...context, env: workflowEnv, github: { workspace: files.workspace, ...context.github } };
  const run: JobRun = { steps: [], ok: true };
  let extraPath: string[] = [];
  for (const step of job.steps) {
    const condition = step.if?.trim();
    if (condition !== undefined && condition !== "always()") throw new Error(`the test runner does not know the condition if: ${condition}`);
    if (!run.ok && condition !== "always()") continue;
    const name = step.name ?? step.uses ?? "step";
    if (step.uses !== undefined) {
      const action = step.uses.split("@")[0];
      const handler = uses[action];
      if (!handler) throw new Error(`no test handler for uses: ${step.uses}`);
      const given = Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, substitute(String(v), { ...full, env: { ...workflowEnv, ...env } })]));
      await handler(given, files);
      run.steps.push({ name, code: 0, stdout: "", stderr: "" });
      continue;
    }
    const stepEnv: Record<string, string> = { ...env };
    if (extraPath.length > 0) stepEnv.PATH = `${extraPath.join(":")}:${env.PATH ?? process.env.PATH}`;
    const result = await runStep(step, full as ExpressionContext & { github: Record<string, string> }, files, stepEnv);
    run.steps.push({ name, ...result });
    if (result.code !== 0) run.ok = false;
    extraPath = (await readFile(files.path, "utf8")).split("\n").filter(Boolean).reverse();
  }
  return run;
}
