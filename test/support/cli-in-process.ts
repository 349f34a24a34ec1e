/**
 * Running `yiem` in this test process: `main(argv, io)` with an io of in-memory streams, the
 * test's environment and folder, and a signal emitter the test can fire. The result has the
 * shape of the spawned runner (./cli.ts `runCli`), so a test switches by changing one import.
 *
 * Rules:
 * - The environment is `baseEnv(options.env)` as for a spawned run. Code the call runs in this
 *   process that reads the process's own (a module tool's or hook's `process.env`, a relative
 *   path resolved by the process's folder) sees the same: for the duration of the call, the
 *   process's environment holds exactly that (set variable by variable, so `os.homedir()` sees
 *   HOME too) and the process's folder is `cwd`; both are restored after. With `ioOnly`, the
 *   process's environment and folder are left as they are: `io.env` and `io.cwd` alone carry the
 *   call's, which proves the call reads only its io (test/cli/call-locations.test.ts,
 *   test/cli/call-env.test.ts). So one in-process call runs at a time in
 *   a test file; a call that starts while another is running, and what only a real process shows
 *   (an inherited file descriptor as stdin, a child to signal through `onSpawn`), runs spawned.
 * - stdin: a string is piped and ended, `"open"` is a pipe that never ends, none is /dev/null.
 * - `timeoutMs` ends the wait as the spawned runner's SIGKILL does (code null, signal SIGKILL).
 * - `io.host` is the in-process one (src/cli/io.ts): what needs a whole process (a second
 *   signal's forced exit, the exit watchdog, a drained event loop) is tested spawned (test/e2e/).
 */
import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import { main } from "../../src/cli/main.js";
import { inProcessHost, type CliIo } from "../../src/cli/io.js";
import { baseEnv, parseNdjson, repoRoot, runCli, type CliOptions, type CliResult } from "./cli.js";

export interface InProcessOptions extends CliOptions {
  /** Called with the call's signal emitter once it runs: `signals.emit("SIGTERM")` as a signal would. */
  onSignals?: (signals: EventEmitter) => void;
  /** Leave the process's environment and folder alone: only io.env and io.cwd are the call's (module rules). */
  ioOnly?: boolean;
}

let running = false;

export async function runCliInProcess(args: string[], options: InProcessOptions = {}): Promise<CliResult> {
  if (running || options.onSpawn || typeof options.stdin === "number") return runCli(args, options);
  running = true;
  const env = baseEnv(options.env);
  const cwd = options.cwd ?? repoRoot;
  const savedEnv = { ...process.env };
  const savedCwd = process.cwd();
  const stdout = collect();
  const stderr = collect();
  const stdin = new PassThrough();
  if (typeof options.stdin === "string" && options.stdin !== "open") stdin.end(options.stdin);
  const signals = new EventEmitter();
  let exitNow: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => (exitNow = resolve));
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), options.timeoutMs ?? 20_000)));
  const io: CliIo = {
    stdin,
    stdinKind: options.stdin === undefined ? "none" : "readable",
    stdout: stdout.stream,
    stderr: stderr.stream,
    isTTY: { stdin: false, stdout: false, stderr: false },
    env: options.ioOnly ? env : process.env,
    cwd,
    signals,
    host: inProcessHost(exitNow),
  };
  try {
    if (!options.ioOnly) {
      replaceEnv(env);
      process.chdir(cwd);
    }
    options.onSignals?.(signals);
    const code = await Promise.race([main(args, io), exited, timedOut]);
    // Writes the call made in its last turn reach the collectors.
    await new Promise((resolve) => setImmediate(resolve));
    const out = stdout.text();
    const err = stderr.text();
    return {
      code,
      signal: code === null ? "SIGKILL" : null,
      stdout: out,
      stderr: err,
      get events() {
        return parseNdjson(err);
      },
    };
  } finally {
    clearTimeout(timer);
    if (options.stdin === "open") stdin.destroy();
    replaceEnv(savedEnv);
    process.chdir(savedCwd);
    running = false;
  }
}

/** Makes the process's environment exactly `env`. */
function replaceEnv(env: Record<string, string | undefined>): void {
  for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
  for (const [key, value] of Object.entries(env)) if (value !== undefined) process.env[key] = value;
}

function collect(): { stream: PassThrough; text(): string } {
  const stream = new PassThrough();
  let text = "";
  stream.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
  return { stream, text: () => text };
}
