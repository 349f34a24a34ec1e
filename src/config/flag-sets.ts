/**
 * Spec values set on the command line: `--set KEY.PATH=VALUE` (repeatable) and the named flags
 * that are shorthands for one key (`--temperature` is `model.temperature`). Rules (docs/spec.md):
 * - a value is read as YAML (`false`, `2m`, `["shell*"]`), except a `raw` one (an env var NAME);
 * - the values are written into the spec before the schema check, which then checks them exactly
 *   like the file's; a problem with a set value names its flag, not the file;
 * - a set replaces the key it names (a list is replaced, not merged); setting a key inside
 *   `model` when the spec's model is a bare name keeps that name; setting one of
 *   `systemPrompt` / `systemPromptFile` drops the other;
 * - paths in set values (`systemPromptFile`, `toolDirs`, `writeToolDir`, hook modules,
 *   `replay:FILE`) resolve against the current folder, as every flag's do;
 * - flag > environment > spec: a set `model.name` or `model.baseURL` beats YIEM_MODEL and
 *   OPENAI_BASE_URL, and `yiem config` reports each set key's source as `flag`.
 */
import path from "node:path";
import { ConfigError } from "./errors.js";
import type { SpecPath } from "../interpolate.js";
import type { SpecProblems } from "./problems.js";
import type { SpecSet } from "./types.js";

/** One set that was applied: the flag that names it in messages and the key it replaced. */
export interface AppliedSet {
  flag: string;
  path: string[];
}

export interface SetsResult {
  /** The spec with every good set applied (a copy; the input is left alone). */
  value: Record<string, unknown>;
  applied: AppliedSet[];
  /** A set created `model` as an object: its missing `name` comes from --model/YIEM_MODEL or is "no model". */
  createdModel: boolean;
}

const KEY_PATH = /^[^.\s=]+(\.[^.\s=]+)*$/;

/** Applies `sets` to `value` (the interpolated spec, or null without one); a bad set is a problem and skipped. */
export async function applySets(value: unknown, sets: SpecSet[], cwd: string, problems: SpecProblems): Promise<SetsResult> {
  const root = (value !== null && typeof value === "object" && !Array.isArray(value) ? structuredClone(value) : {}) as Record<string, unknown>;
  const applied: AppliedSet[] = [];
  let createdModel = false;
  const yaml = sets.some((set) => !set.raw) ? await import("yaml") : undefined;
  for (const set of sets) {
    const flag = set.flag === "--set" ? `--set ${set.key}` : set.flag;
    if (set.value === undefined) {
      problems.add(new ConfigError(`--set needs KEY.PATH=VALUE, like model.stream=false (got ${JSON.stringify(set.key)})`, { key: "--set" }));
      continue;
    }
    if (!KEY_PATH.test(set.key)) {
      problems.add(new ConfigError(`${flag}: ${JSON.stringify(set.key)} is not a key path (keys joined by ".", like limits.toolTimeoutMs)`, { key: "--set" }));
      continue;
    }
    let parsed: unknown = set.value;
    if (!set.raw && yaml) {
      try {
        parsed = yaml.parse(set.value);
      } catch (error) {
        problems.add(new ConfigError(`${flag}: the value is not valid YAML (${(error as Error).message.split("\n")[0]})`, { key: flag }));
        continue;
      }
    }
    const keys = set.key.split(".");
    if (keys[0] === "model" && keys.length > 1 && !isMapping(root.model)) {
      if (typeof root.model === "string") root.model = { name: root.model };
      else {
        root.model = {};
        createdModel = true;
      }
    }
    let container = root;
    for (const key of keys.slice(0, -1)) {
      if (!isMapping(container[key])) container[key] = {};
      container = container[key] as Record<string, unknown>;
    }
    container[keys.at(-1)!] = fromCwd(keys, parsed, cwd);
    if (keys.length === 1 && keys[0] === "systemPrompt") delete root.systemPromptFile;
    if (keys.length === 1 && keys[0] === "systemPromptFile") delete root.systemPrompt;
    applied.push({ flag, path: keys });
  }
  return { value: root, applied, createdModel };
}

/** The flag that set `specPath` (the key itself, a key inside it, or the key holding it), if any. */
export function flagOf(applied: AppliedSet[], specPath: SpecPath): string | undefined {
  for (let i = applied.length - 1; i >= 0; i--) {
    const set = applied[i].path;
    const n = Math.min(set.length, specPath.length);
    if (set.slice(0, n).every((part, j) => part === String(specPath[j]))) return applied[i].flag;
  }
  return undefined;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A set value's paths made absolute against `cwd` (the rule above); other values as they are. */
function fromCwd(keys: string[], value: unknown, cwd: string): unknown {
  const key = keys.join(".");
  const file = (text: unknown) => (typeof text === "string" && text !== "" ? path.resolve(cwd, text) : text);
  if (key === "systemPromptFile" || key === "writeToolDir" || key === "hooks.beforeToolCall" || key === "hooks.afterToolCall") return file(value);
  if (key === "toolDirs" && Array.isArray(value)) return value.map(file);
  if ((key === "model" || key === "model.name") && typeof value === "string" && /^replay:./s.test(value)) return `replay:${path.resolve(cwd, value.slice("replay:".length))}`;
  return value;
}
