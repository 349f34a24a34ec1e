/**
 * The one error type of spec loading: a clear message; the CLI maps it to exit code 2. A load
 * that finds several problems throws one ConfigError holding them all (./problems.ts).
 */
import path from "node:path";
import type { SpecPath } from "../interpolate.js";
import { YiemError } from "../errors.js";


export interface ConfigErrorDetails {
  /** Absolute path of the file at fault. */
  file?: string;
  /** 1-based line in `file`, when known. */
  line?: number;
  /** Dotted key in the spec (`limits.maxTurns`), or a flag (`--tool-execution`) or variable name. */
  key?: string;
  /** The spec key at fault, as a path, when the problem is about a key of the spec file. */
  specPath?: SpecPath;
}

export class ConfigError extends YiemError {
  readonly file?: string;
  readonly line?: number;
  readonly key?: string;
  readonly specPath?: SpecPath;
  /** Every problem found, in order, when this error reports several (each one also stands alone). */
  problems?: ConfigError[];
  /** Set when the spec came from the cache (no line map); loadSpec then loads it again uncached. */
  fromCache?: boolean;
  constructor(message: string, details: ConfigErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, "config", options);
    this.name = "ConfigError";
    this.file = details.file;
    this.line = details.line;
    this.key = details.key;
    this.specPath = details.specPath;
  }
}

/** How a file is named in messages: relative to cwd when inside it, else absolute. */
export function displayPath(file: string, cwd: string): string {
  const rel = path.relative(cwd, file);
  return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : file;
}

/** `file:line: message` (or `file: message` when the line is unknown). */
export function fileError(
  message: string,
  where: { file: string; line?: number; key?: string; specPath?: SpecPath; cwd: string },
): ConfigError {
  const prefix = displayPath(where.file, where.cwd) + (where.line ? `:${where.line}` : "");
  return new ConfigError(`${prefix}: ${message}`, { file: where.file, line: where.line, key: where.key, specPath: where.specPath });
}

/** A value for a message: strings quoted and cut short, objects and lists named by kind. */
export function showValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") {
    const cut = value.length > 60 ? value.slice(0, 57) + "..." : value;
    return JSON.stringify(cut);
  }
  return String(value);
}
