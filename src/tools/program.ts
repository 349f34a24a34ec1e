/**
 * Whether the program of a command tool or command hook can be started, checked before any call
 * (the same lookup the child process gets). Rules:
 * - a program with a slash is a path: relative ones resolve against `cwd` (a manifest's or the
 *   spec's folder); it must be a regular file (or a link to one) that may be executed;
 * - a bare name is looked up in the child's `PATH`, folder by folder: the first regular,
 *   executable file of that name wins; none found is a problem;
 * - on Windows a bare name may also end in one of `PATHEXT`, and nothing is checked for the
 *   executable bit (there is none).
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { fileKind } from "../regular-file.js";

export interface ProgramLookup {
  /** The folder a relative path resolves against. */
  cwd: string;
  /** The child's PATH (default: this process's). */
  path?: string;
}

/** Why `program` cannot be started (a phrase naming it), or undefined when it can. */
export function programProblem(program: string, lookup: ProgramLookup): string | undefined {
  if (isAbsolute(program) || /[\\/]/.test(program)) {
    const file = resolve(lookup.cwd, program);
    const shown = file === program ? JSON.stringify(program) : `${JSON.stringify(program)} (${file})`;
    const problem = fileProblem(file);
    return problem === undefined ? undefined : `program ${shown} ${problem}`;
  }
  const folders = (lookup.path ?? process.env.PATH ?? "").split(delimiter).filter(Boolean);
  const names = process.platform === "win32" ? ["", ...(process.env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";")].map((ext) => program + ext) : [program];
  const found = folders.flatMap((folder) => names.map((name) => join(resolve(lookup.cwd, folder), name))).map((file) => [file, fileProblem(file)] as const);
  if (found.some(([, problem]) => problem === undefined)) return undefined;
  const notRunnable = found.find(([, problem]) => problem !== "not found");
  if (notRunnable) return `program ${JSON.stringify(program)} is on PATH only as ${notRunnable[0]}, which ${notRunnable[1]}`;
  return `program ${JSON.stringify(program)} is not on PATH`;
}

/** Why `file` cannot be executed, or undefined when it can. */
function fileProblem(file: string): string | undefined {
  const stats = statSync(file, { throwIfNoEntry: false });
  if (!stats) return "not found";
  if (!stats.isFile()) return `is not a file (${fileKind(stats)})`;
  if (process.platform === "win32") return undefined;
  try {
    accessSync(file, constants.X_OK);
    return undefined;
  } catch {
    return "is not executable (chmod +x)";
  }
}
