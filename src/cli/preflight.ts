/**
 * What `yiem run` checks before anything runs, so that every mistake is reported at once (with
 * the spec's, see config/problems.ts) and before the API key is asked for. Rules:
 * - a missing prompt is known at once when there are no prompt words (before or after `--`), no
 *   `--session` (it may hold the conversation to continue) and no stdin to read (a terminal, none,
 *   or `--no-stdin`; `--stdin` and the word `-` always read it); a prompt that is to
 *   come from stdin is known only once stdin is read, after the spec is found fine;
 * - `--session` and `--record` name files yiem writes: their folder must exist (yiem never creates
 *   it) and the file, when it exists, must be a regular file;
 * - under strict loading, the load problems (./setup.ts `findLoadProblems`) end the run, exit 2,
 *   before the model is called.
 */
import { statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { displayPath } from "../config/errors.js";
import type { ResolvedSpec } from "../config/types.js";
import { fileKind } from "../regular-file.js";
import { UsageError } from "../errors.js";
import { loadProblemMessage, type LoadProblem } from "./setup.js";
import type { CliIo } from "./io.js";
import { STDIN_MARK } from "./stdin-mark.js";
import { NO_PROMPT, promptInput } from "./prompt-input.js";


/** The problems of `yiem run`'s command line that need neither the spec nor stdin's text. */
export function commandLineProblems(argv: Record<string, unknown>, io: CliIo): string[] {
  const problems: string[] = [];
  try {
    promptInput(argv, io.env);
  } catch (error) {
    problems.push((error as Error).message);
  }
  const words = [...((argv.prompt as unknown[] | undefined) ?? []), ...((argv["--"] as unknown[] | undefined) ?? [])].map(String);
  const stdinComes = argv.stdin !== false && (argv.stdin === true || words.includes(STDIN_MARK) || io.stdinKind === "readable");
  if (words.filter((word) => word !== STDIN_MARK).join("").trim() === "" && argv.session === undefined && !stdinComes) problems.push(NO_PROMPT);
  for (const flag of ["session", "record"] as const) {
    if (argv[flag] === undefined) continue;
    const problem = writtenFileProblem(String(argv[flag]), flag === "session" ? "session file" : "record file", io.cwd);
    if (problem) problems.push(problem);
  }
  return problems;
}

/**
 * Why yiem cannot write `file` (named by a flag; a relative one in `cwd`, the call's folder), or
 * undefined: its folder is missing or not a folder, or the file is something other than a
 * regular file. Messages name `file` as given.
 */
export function writtenFileProblem(file: string, noun: string, cwd?: string): string | undefined {
  const absolute = cwd === undefined ? resolve(file) : resolve(cwd, file);
  const folder = dirname(absolute);
  const folderStats = statSync(folder, { throwIfNoEntry: false });
  if (!folderStats) return `${noun} ${file}: its folder ${folder} does not exist (yiem does not create folders)`;
  if (!folderStats.isDirectory()) return `${noun} ${file}: ${folder} is not a folder`;
  const stats = statSync(absolute, { throwIfNoEntry: false });
  if (stats && !stats.isFile()) return `${noun} ${file} is not a regular file (${fileKind(stats)})`;
  return undefined;
}

/**
 * Whether the paths `a` and `b` name one file: the same path, or (both existing) the same device
 * and inode, so a symbolic or hard link to a file is that file. A results file that is the input
 * would be overwritten or truncated by the batch.
 */
export function sameFile(a: string, b: string): boolean {
  if (resolve(a) === resolve(b)) return true;
  const first = statSync(a, { throwIfNoEntry: false });
  const second = first && statSync(b, { throwIfNoEntry: false });
  return first !== undefined && second !== undefined && first.dev === second.dev && first.ino === second.ino;
}

/** Under strict loading, the error naming every load problem; undefined when not strict or none. */
export function strictLoadError(spec: ResolvedSpec, problems: LoadProblem[], cwd: string): UsageError | undefined {
  if (!spec.strict || problems.length === 0) return undefined;
  const why = spec.sources.strict === "flag" ? "--strict" : "strict: true in the spec";
  const lines = problems.map((p) => (p.path ? `${displayPath(p.path, cwd)}: ${loadProblemMessage(p)}` : loadProblemMessage(p)));
  const head = `${problems.length} load problem${problems.length === 1 ? "" : "s"} (${why}), so the model was not called`;
  return new UsageError(`${head}:\n${lines.map((line) => `  ${line}`).join("\n")}`);
}
