/**
 * A content-hash cache for spec files, so that a warm start needs neither the YAML parser nor
 * ajv (together most of `yiem tools list`'s start-up). Rules:
 * - parsed specs are keyed by the file's path and exact text; a hit gives the value only (no line
 *   map), so any error found on a cached spec is reported by loading again without the cache;
 * - "this interpolated spec is valid" is keyed by the value's JSON and the schema's text, so a
 *   changed environment variable or schema is checked again;
 * - the cache is an optimisation only: every read or write failure is ignored.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { yiemCacheDir } from "../cache-dir.js";

const FORMAT = "spec-cache-1";

function key(...parts: string[]): string {
  const hash = createHash("sha256");
  for (const part of [FORMAT, ...parts]) hash.update(part).update("\0");
  return hash.digest("hex").slice(0, 40);
}

function folder(): string {
  return join(yiemCacheDir(), "specs");
}

function read(name: string): string | undefined {
  try {
    return readFileSync(join(folder(), name), "utf8");
  } catch {
    return undefined;
  }
}

function write(name: string, text: string): void {
  try {
    mkdirSync(folder(), { recursive: true });
    const target = join(folder(), name);
    const temp = `${target}.${process.pid}.tmp`;
    writeFileSync(temp, text);
    renameSync(temp, target);
  } catch {
    // a cache that cannot be written only costs speed
  }
}

/** The cached parse of `file` with exactly `text`, if any. */
export function cachedParse(file: string, text: string): { value: unknown } | undefined {
  const hit = read(`${key("parse", file, text)}.json`);
  if (hit === undefined) return undefined;
  try {
    return { value: (JSON.parse(hit) as { value: unknown }).value };
  } catch {
    return undefined;
  }
}

export function storeParse(file: string, text: string, value: unknown): void {
  write(`${key("parse", file, text)}.json`, JSON.stringify({ value }));
}

/** Whether `value` was already found valid against the schema with text `schemaText`. */
export function knownValid(value: unknown, schemaText: string): boolean {
  return read(`${key("valid", schemaText, JSON.stringify(value))}.ok`) !== undefined;
}

export function storeValid(value: unknown, schemaText: string): void {
  write(`${key("valid", schemaText, JSON.stringify(value))}.ok`, "");
}
