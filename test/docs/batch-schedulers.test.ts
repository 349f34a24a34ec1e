/**
 * docs/batch.md's GitHub Actions workflow and Kubernetes Indexed Job, exercised
 * as far as this machine allows, through the real `yiem batch` against the scripted server:
 * - the workflow: parsed, its shape checked (matrix = the 1-based shards its command names,
 *   artifacts named per shard and downloaded by the merge job), then every job's steps run as a
 *   runner runs them (test/support/github-action.ts) for each matrix value, the artifacts carried
 *   from job to job as upload/download-artifact would, then the merge job;
 * - the manifest: parsed, checked for the fields it uses (batch/v1 Job, Indexed, completions =
 *   the shard count `--shard auto` reads, the volumes its mounts name), then its container's
 *   command run for every index with the environment the Job controller sets and `$(VAR)` in
 *   args expanded as the kubelet does, the mounts mapped to folders here; then the merge command.
 */
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startChatServer, reply, type ChatServer } from "../support/chat-server.js";
import { repoRoot, yiemBin } from "../support/cli.js";
import { workflowCommands } from "../support/github.js";
import { runJob, runnerFiles, type UsesHandler, type Workflow } from "../support/github-action.js";

const doc = await readFile(join(repoRoot, "docs", "batch.md"), "utf8");

/** The first fenced block of `lang` after the heading `heading`. */
function blockAfter(heading: string, lang: string): string {
  const at = doc.indexOf(`\n## ${heading}\n`);
  if (at < 0) throw new Error(`docs/batch.md has no "## ${heading}"`);
  const match = new RegExp("^```" + lang + "\\n([\\s\\S]*?)^```$", "m").exec(doc.slice(at));
  if (!match) throw new Error(`no ${lang} block after "## ${heading}"`);
  return match[1];
}

const workflow = parse(blockAfter("Sharding on GitHub Actions", "yaml")) as Workflow;
const manifest = parse(blockAfter("Sharding on Kubernetes (Indexed Job)", "yaml")) as any;
const mergeCommand = blockAfter("Sharding on Kubernetes (Indexed Job)", "sh").trim();

const ITEMS = 24;
const input = Array.from({ length: ITEMS }, (_, i) => JSON.stringify({ id: `issue-${i + 1}`, prompt: `triage issue ${i + 1}` })).join("\n") + "\n";
const SPEC = ["model:", "  name: test-model", "  baseURL: ${YIEM_TEST_BASE_URL}", "  apiKeyEnv: OPENAI_API_KEY", "  maxRetries: 0", "builtinTools: []", ""].join("\n");
const KEY = "sk-docs-batch-key";

let root: string;
let server: ChatServer;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "yiem-docs-batch-"));
  // Each item gets one answer naming its prompt.
  server = await startChatServer((request) => reply.stream({ content: `label for ${String(request.body.messages.at(-1)?.content)}` }));
});
afterAll(async () => {
  await server.close();
  await rm(root, { recursive: true, force: true });
});

/** The ids of a results file, in order. */
async function idsOf(file: string): Promise<string[]> {
  return (await readFile(file, "utf8")).split("\n").filter(Boolean).map((line) => JSON.parse(line).id);
}

const allIds = Array.from({ length: ITEMS }, (_, i) => `issue-${i + 1}`);

describe("docs/batch.md: the GitHub Actions workflow", { timeout: 240_000 }, () => {
  it("has the shape it relies on: 1-based matrix of SHARDS values, no fail-fast, a merge job that always runs", () => {
    const shard = workflow.jobs.shard;
    const shards = Number(workflow.env?.SHARDS);
    expect(shard.strategy?.matrix?.shard).toEqual(Array.from({ length: shards }, (_, i) => i + 1));
    expect(shard.strategy?.["fail-fast"]).toBe(false);
    const merge = workflow.jobs.merge;
    expect(merge.needs).toBe("shard");
    expect(merge.if).toBe("always()");
    const upload = shard.steps.find((s) => s.uses?.startsWith("actions/upload-artifact@"));
    const download = merge.steps.find((s) => s.uses?.startsWith("actions/download-artifact@"));
    expect(upload?.if).toBe("always()");
    expect(upload?.with?.name).toBe("results-${{ matrix.shard }}");
    expect(download?.with).toMatchObject({ pattern: "results-*", "merge-multiple": true });
  });

  it("runs: every shard job, then the merge job, gives every input id exactly once", async () => {
    const artifacts = join(root, "artifacts");
    const { merged, shardRuns } = await runWorkflow(artifacts);
    for (const run of shardRuns) {
      expect(run.ok, JSON.stringify(run.steps.map((s) => [s.name, s.code, s.stderr.slice(-500)]))).toBe(true);
      // --events github: only workflow commands, no annotation when every item succeeded.
      const batchStep = run.steps.find((s) => s.name === "Run one shard")!;
      expect(workflowCommands(batchStep.stderr).filter((c) => c.name === "error")).toEqual([]);
    }
    const shardArtifacts = (await readdir(artifacts)).filter((name) => /^results-\d+$/.test(name));
    expect(shardArtifacts).toHaveLength(Number(workflow.env?.SHARDS));
    const shardIds = await Promise.all(shardArtifacts.map(async (name) => idsOf(join(artifacts, name, `${name}.jsonl`))));
    expect(await readdir(join(artifacts, "all-results"))).toEqual(["all.jsonl"]);
    // The shards partition the ids, and none is empty for this input.
    expect(shardIds.flat().sort()).toEqual([...allIds].sort());
    for (const ids of shardIds) expect(ids.length).toBeGreaterThan(0);
    expect(merged.run.ok, merged.run.steps.map((s) => s.stderr).join("\n")).toBe(true);
    expect((await idsOf(join(merged.workspace, "all.jsonl"))).sort()).toEqual([...allIds].sort());
  });

  it("a shard whose results never arrived makes the merge step fail, naming the missing ids", async () => {
    const artifacts = join(root, "artifacts-lost");
    const { merged, lost } = await runWorkflow(artifacts, { dropShard: 2 });
    const mergeStep = merged.run.steps.find((s) => s.name === "Merge")!;
    expect(mergeStep.code).toBe(1);
    expect(lost.length).toBeGreaterThan(0);
    expect(mergeStep.stderr).toContain(lost[0]);
  });
});

/** A checkout of the repository the workflow lives in: the spec, the input, yiem as a dev dependency. */
async function checkout(dir: string): Promise<void> {
  await mkdir(join(dir, "agents"), { recursive: true });
  await writeFile(join(dir, "agents", "triage.yaml"), SPEC);
  await writeFile(join(dir, "issues.jsonl"), input);
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "triage", private: true, devDependencies: { yiem: "0.1.0" } }));
}

/** A stand-in `npm` whose `ci` installs this checkout's yiem into node_modules (no registry here). */
async function fakeNpm(dir: string): Promise<string> {
  const bin = join(dir, "fake-npm");
  await mkdir(bin, { recursive: true });
  await writeFile(join(bin, "npm"), [
    "#!/bin/sh",
    'if [ "$1" != ci ]; then echo "the stand-in npm only knows ci" >&2; exit 1; fi',
    "mkdir -p node_modules/.bin",
    `ln -sfn ${JSON.stringify(repoRoot)} node_modules/yiem`,
    "ln -sfn ../yiem/bin/yiem.js node_modules/.bin/yiem",
    "",
  ].join("\n"));
  await chmod(join(bin, "npm"), 0o755);
  return bin;
}

async function runWorkflow(artifacts: string, options: { dropShard?: number } = {}) {
  await mkdir(artifacts, { recursive: true });
  const bin = await fakeNpm(root);
  const env = { PATH: `${bin}:${process.env.PATH}`, YIEM_TEST_BASE_URL: server.url };
  const secrets = { OPENAI_API_KEY: KEY };
  const uses: Record<string, UsesHandler> = {
    "actions/checkout": async (_with, files) => checkout(files.workspace),
    "actions/setup-node": async () => {},
    "actions/upload-artifact": async (given, files) => {
      const from = join(files.workspace, given.path);
      const exists = await readFile(from).then(() => true, () => false);
      if (!exists) {
        if (given["if-no-files-found"] === "error") throw new Error(`upload-artifact: no ${given.path}`);
        return;
      }
      await mkdir(join(artifacts, given.name), { recursive: true });
      await cp(from, join(artifacts, given.name, basename(given.path)));
    },
    "actions/download-artifact": async (given, files) => {
      const pattern = new RegExp(`^${given.pattern.replace(/\*/g, ".*")}$`);
      const to = join(files.workspace, given.path);
      await mkdir(to, { recursive: true });
      for (const name of await readdir(artifacts)) {
        if (!pattern.test(name)) continue;
        for (const file of await readdir(join(artifacts, name))) await cp(join(artifacts, name, file), join(to, file));
      }
    },
  };
  const shardRuns = [];
  for (const shard of workflow.jobs.shard.strategy!.matrix!.shard) {
    const files = await runnerFiles(await mkdtemp(join(root, `job-shard-${shard}-`)));
    shardRuns.push(await runJob(workflow, workflow.jobs.shard, { matrix: { shard }, secrets }, files, uses, env));
  }
  let lost: string[] = [];
  if (options.dropShard !== undefined) {
    const name = `results-${options.dropShard}`;
    lost = await idsOf(join(artifacts, name, `${name}.jsonl`));
    await rm(join(artifacts, name), { recursive: true, force: true });
  }
  const workspace = await mkdtemp(join(root, "job-merge-"));
  const run = await runJob(workflow, workflow.jobs.merge, { secrets }, await runnerFiles(workspace), uses, env);
  return { shardRuns, merged: { run, workspace }, lost };
}

describe("docs/batch.md: the Kubernetes Indexed Job", { timeout: 240_000 }, () => {
  const container = manifest.spec.template.spec.containers[0];
  const envOf = (name: string) => container.env.find((e: { name: string }) => e.name === name);

  it("uses the fields an Indexed Job needs, with completions = the shard count --shard auto reads", () => {
    expect(manifest).toMatchObject({ apiVersion: "batch/v1", kind: "Job", spec: { completionMode: "Indexed" } });
    const { completions, parallelism } = manifest.spec;
    expect(Number.isInteger(completions) && completions > 0).toBe(true);
    expect(parallelism).toBeLessThanOrEqual(completions);
    expect(manifest.spec.template.spec.restartPolicy).toBe("Never");
    expect(Number(envOf("YIEM_SHARD_COUNT")?.value)).toBe(completions);
    expect(container.args).toEqual(expect.arrayContaining(["--shard", "auto", "--resume"]));
    // The results file is named by the index the controller sets; every mount names a volume.
    expect(container.args.join(" ")).toContain("$(JOB_COMPLETION_INDEX)");
    const volumes = new Set(manifest.spec.template.spec.volumes.map((v: { name: string }) => v.name));
    for (const mount of container.volumeMounts) expect(volumes.has(mount.name)).toBe(true);
    expect(envOf("OPENAI_API_KEY")?.valueFrom?.secretKeyRef).toBeDefined();
  });

  it("runs: the container's command for every index, then the merge command, gives every id exactly once", async () => {
    const mounts: Record<string, string> = {};
    for (const mount of container.volumeMounts) mounts[mount.mountPath] = await mkdtemp(join(root, `k8s-${mount.name}-`));
    const config = container.volumeMounts.find((m: { name: string }) => m.name === "config").mountPath;
    await writeFile(join(mounts[config], "triage.yaml"), SPEC);
    await writeFile(join(mounts[config], "issues.jsonl"), input);
    const onHost = (arg: string) => Object.entries(mounts).reduce((text, [path, dir]) => text.split(`${path}/`).join(`${dir}/`), arg);
    for (let index = 0; index < manifest.spec.completions; index++) {
      // What the controller and the kubelet give the container: its env, the index, $(VAR) expanded.
      const env: Record<string, string> = { JOB_COMPLETION_INDEX: String(index), YIEM_TEST_BASE_URL: server.url };
      for (const entry of container.env) env[entry.name] = entry.value ?? (entry.valueFrom?.secretKeyRef ? KEY : "");
      const args = container.args.map((arg: string) => onHost(arg.replace(/\$\(([A-Z_][A-Z0-9_]*)\)/g, (_all: string, name: string) => env[name] ?? `$(${name})`)));
      expect(container.command).toEqual(["yiem"]);
      const r = await run(process.execPath, [yiemBin, ...args], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain("JOB_COMPLETION_INDEX");
    }
    const results = container.volumeMounts.find((m: { name: string }) => m.name === "results").mountPath;
    const produced = await readdir(mounts[results]);
    expect(produced.sort()).toEqual(Array.from({ length: manifest.spec.completions }, (_, i) => `results-${i}.jsonl`).sort());
    // The merge command, with the shell's glob expanded on the results folder.
    const words = mergeCommand.split(/\s+/);
    expect(words.slice(0, 3)).toEqual(["yiem", "batch", "merge"]);
    const expanded = words.slice(1).flatMap((word) => (word.includes("*") ? produced.filter((f) => new RegExp(`^${basename(word).replace(/\*/g, ".*")}$`).test(f)).map((f) => join(mounts[results], f)) : [onHost(word)]));
    const out = join(root, "k8s-all.jsonl");
    const r = await run(process.execPath, [yiemBin, ...expanded.map((w) => (w === "all.jsonl" ? out : w))], {});
    expect(r.code, r.stderr).toBe(0);
    expect((await idsOf(out)).sort()).toEqual([...allIds].sort());
  });
});

function run(command: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? root, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
