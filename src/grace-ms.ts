/**
 * The grace periods set by environment variables (docs/cli.md): `YIEM_KILL_GRACE_MS` (SIGTERM to
 * SIGKILL of a child yiem ends, src/tools/process.ts) and `YIEM_EXIT_GRACE_MS` (the wait for stderr
 * after a command's last event, src/cli/bounded-exit.ts). Rules:
 * - a value is a number of milliseconds ≥ 0 (`2000`, `0`, `1500.5`); unset or empty means the default;
 * - the CLI refuses any other value before a command starts (`graceVariableProblem`, a usage
 *   error naming the variable), as it does for `YIEM_STDIN_GRACE`; a library caller gets the
 *   default for it (`graceMs`).
 */

export const GRACE_VARIABLES = ["YIEM_KILL_GRACE_MS", "YIEM_EXIT_GRACE_MS"] as const;
export type GraceVariable = (typeof GRACE_VARIABLES)[number];

/** The value of `name` in `env` when it is valid (rules above), else `fallback`. */
export function graceMs(env: NodeJS.ProcessEnv, name: GraceVariable, fallback: number): number {
  const parsed = parse(env[name]);
  return parsed ?? fallback;
}

/** What is wrong with the grace variables of `env`, for a usage error; undefined when nothing is. */
export function graceVariableProblem(env: NodeJS.ProcessEnv): string | undefined {
  for (const name of GRACE_VARIABLES) {
    const raw = env[name];
    if (raw !== undefined && raw !== "" && parse(raw) === undefined) {
      return `${name}=${JSON.stringify(raw)} is not a number of milliseconds ≥ 0 (like 2000; unset it for the default)`;
    }
  }
  return undefined;
}

function parse(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const value = Number(raw);
  return Number.isFinite(value) && value >= 0 ? value : undefined;
}
