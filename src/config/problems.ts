/**
 * Every problem of one spec load, collected so that all of them are reported at once. Rules:
 * - the problems are kept in the order found: the command line first, then the spec file (its
 *   `${VAR}`s, its schema errors, then its missing files), then the flags and values resolved
 *   from it;
 * - a spec value that is wrong is set aside ("pruned") and its default used, so the rest can still
 *   be checked; a later problem about a pruned key, a key inside it or the key holding it is a
 *   consequence and is dropped (a bad `model.name` is not also "no model");
 * - one problem is thrown as itself; several as one ConfigError whose message lists them one a
 *   line and whose `problems` holds them.
 */
import { ConfigError } from "./errors.js";
import type { SpecPath } from "../interpolate.js";

export class SpecProblems {
  readonly found: ConfigError[] = [];
  readonly pruned: SpecPath[] = [];

  /** Adds `error`, unless it is about a pruned key (rule above); `prune` sets its key aside too. */
  add(error: ConfigError, prune = false): void {
    if (error.specPath && this.isPruned(error.specPath)) return;
    this.found.push(error);
    if (prune && error.specPath) this.pruned.push(error.specPath);
  }

  /** Runs `work`; a ConfigError it throws is added and undefined returned. Other errors are thrown. */
  async check<T>(work: () => Promise<T> | T): Promise<T | undefined> {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const one of error.problems ?? [error]) this.add(one);
      return undefined;
    }
  }

  /** Whether `specPath` is a pruned key, inside one, or holds one. */
  isPruned(specPath: SpecPath): boolean {
    return this.pruned.some((p) => startsWith(p, specPath) || startsWith(specPath, p));
  }

  get empty(): boolean {
    return this.found.length === 0;
  }

  /** Throws the problems found (rule above); does nothing when there are none. */
  throwIfAny(): void {
    if (this.found.length > 0) throw combineProblems(this.found);
  }
}

/** One error for `errors` (at least one): the error itself, or one listing them all. */
export function combineProblems(errors: ConfigError[]): ConfigError {
  if (errors.length === 1) return errors[0];
  const [first] = errors;
  const combined = new ConfigError(`${errors.length} problems:\n${errors.map((e) => `  ${e.message}`).join("\n")}`, {
    file: first.file,
    line: first.line,
    key: first.key,
    specPath: first.specPath,
  });
  combined.problems = errors;
  return combined;
}

function startsWith(path: SpecPath, prefix: SpecPath): boolean {
  return prefix.length <= path.length && prefix.every((part, i) => String(part) === String(path[i]));
}
