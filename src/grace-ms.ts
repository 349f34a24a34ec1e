/**
 * The grace periods set by environment variables (docs/cli.md): `YIEM_KILL_GRACE_MS` (SIGTERM to
 * SIGKILL of a child yiem ends, src/tools/process.ts) and `YIEM_EXIT_GRACE_MS` (the wait for stderr
 * after a command's last event, src/cli/bounded-exit.ts). Rules:
 * - a value is a whole or decimal number of milliseconds, digits only (`2000`, `0`, `1500.5`), at
 *   most MAX_GRACE_MS (the longest timer Node sets; a longer one fires at once); unset or empty
 *   means the default;
 * - the CLI refuses any other value before any command starts (`graceVariableProblem`, a usage
 *   error naming the variable), whether or not that command would use it; a library caller gets
 *   the default for it (`graceMs`).
 */

export const GRACE_VARIABLES = ["YIEM_KILL_GRACE_MS", "YIEM_EXIT_GRACE_MS"] as const;
/** 2^31 − 1 ms (~24.8 days): Node's timers take no longer delay. */
export const MAX_GRACE_MS = 2_147_483_647;
export type GraceVariable = (typeof GRACE_VARIABLES)[number];

/** The value of `name` in `env` when it is valid (rules above), else `fallback`. */
export function graceMs(env: NodeJS.ProcessEnv, name: GraceVariable, fallback: number): number {
  return parse(env[name]) ?? fallback;
}

/** What is wrong with the grace variables of `env`, for a usage error; undefined when nothing is. */
export function graceVariableProblem(env: NodeJS.ProcessEnv): string | undefined {
  for (const name of GRACE_VARIABLES) {
    const raw = env[name];
    if (raw !== undefined && raw !== "" && parse(raw) === undefined) {
      return `${name}=${JSON.stringify(raw)} is not a number of milliseconds from 0 to ${MAX_GRACE_MS} (like 2000; unset it for the default)`;
    }
  }
  return undefined;
}

function parse(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^\d+(?:\.\d+)?$/.test(raw)) return undefined;
  const value = Number(raw);
  return value <= MAX_GRACE_MS ? value : undefined;
}
