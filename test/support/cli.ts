/**
 * Running the real `yiem` binary as a child process, exactly as a user does, and checking its
 * NDJSON stderr against schema/events.schema.json. The CLI runs from dist/ (`npm test` builds first).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
export const yiemBin = fileURLToPath(new URL("../../bin/yiem.js", import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stderr parsed as NDJSON (only meaningful in ndjson mode). */
  events: Array<Record<string, unknown> & { type: string }>;
}

export interface CliOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** Written to stdin then closed; `"open"` leaves stdin an open pipe; a number is a file descriptor; undefined = /dev/null. */
  stdin?: string | "open" | number;
  /** Kill after this many ms (the test fails on a hang rather than waiting forever). */
  timeoutMs?: number;
  /** Called once the child has started (e.g. to send it a signal later). */
  onSpawn?: (child: import("node:child_process").ChildProcess) => void;
}

/** A clean environment: no keys or model settings leak in from the developer's shell. */
export function baseEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined) continue;
    if (/^(OPENAI_|YIEM_)/.test(k) || /KEY|TOKEN|SECRET|PASSWORD/i.test(k)) continue;
    env[k] = v;
  }
  env.NO_COLOR = "1";
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [yiemBin, ...args], {
      cwd: options.cwd ?? repoRoot,
      env: baseEnv(options.env),
      stdio: [options.stdin === undefined ? "ignore" : typeof options.stdin === "number" ? options.stdin : "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    if (typeof options.stdin === "string" && options.stdin !== "open") {
      child.stdin!.end(options.stdin);
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 20_000);
    options.onSpawn?.(child);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (options.stdin === "open") child.stdin?.destroy();
      resolvePromise({
        code,
        signal,
        stdout,
        stderr,
        get events() {
          return parseNdjson(stderr);
        },
      });
    });
  });
}

export function parseNdjson(text: string): CliResult["events"] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      try {
        return JSON.parse(line) as CliResult["events"][number];
      } catch {
        throw new Error(`stderr line is not JSON: ${line.slice(0, 300)}`);
      }
    });
}

let validateEvent: ((value: unknown) => boolean) & { errors?: unknown } | undefined;

/** Every line valid against the events schema; agentStart (when present) first; agentEnd exactly once, last. */
export function assertEventStream(events: CliResult["events"], options: { requireStart?: boolean } = {}): void {
  if (!validateEvent) {
    const addFormats = addFormatsModule as unknown as (ajv: Ajv) => void;
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats(ajv);
    const schema = JSON.parse(readFileSync(new URL("../../schema/events.schema.json", import.meta.url), "utf8"));
    validateEvent = ajv.compile(schema);
  }
  for (const event of events) {
    if (!validateEvent(event)) {
      throw new Error(`event does not match the schema: ${JSON.stringify(event).slice(0, 400)}\n${JSON.stringify(validateEvent.errors).slice(0, 800)}`);
    }
  }
  const ends = events.filter((e) => e.type === "agentEnd");
  if (ends.length !== 1) throw new Error(`expected exactly one agentEnd, got ${ends.length}`);
  if (events.at(-1)?.type !== "agentEnd") throw new Error("agentEnd is not the last event");
  if ((options.requireStart ?? true) && events[0]?.type !== "agentStart") throw new Error(`first event is ${events[0]?.type}, not agentStart`);
  events.forEach((e, i) => {
    if (e.seq !== i + 1) throw new Error(`event ${i} has seq ${String(e.seq)}, expected ${i + 1}`);
  });
}

/**
 * A temporary project for the pipeline tests: agent.config.yaml against `${TEST_BASE_URL}` (no
 * retries, no built-in tools), bad.yaml (a spec with an unknown key) and openai.yaml (a short spec).
 */
export async function pipelineProject(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await writeFile(
    join(dir, "agent.config.yaml"),
    ["model:", "  name: test-model", "  baseURL: ${TEST_BASE_URL}", "  apiKeyEnv: TEST_API_KEY", "  maxRetries: 0", "builtinTools: []", ""].join("\n"),
  );
  await writeFile(join(dir, "bad.yaml"), "model: { name: m, baseUrl: http://x }\n");
  await writeFile(join(dir, "openai.yaml"), "model: gpt-4o\n");
  return dir;
}
