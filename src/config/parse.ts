/**
 * Parsing a spec file's text with line numbers kept: YAML (also `.yiemrc`) through the `yaml`
 * package, JSON with JSON.parse (located through `yaml`, which reads JSON too).
 * `package.json` contributes its `yiem` property. Syntax errors name the file and line.
 */
import path from "node:path";
import type { Document, LineCounter, Node as YamlNode } from "yaml";
import { fileError } from "./errors.js";
import type { SpecPath } from "../interpolate.js";
import { cachedParse, storeParse } from "./spec-cache.js";
import { processCacheScope, type CacheScope } from "../cache-dir.js";


export interface ParsedSpecFile {
  /** Absolute path. */
  file: string;
  /** The spec (package.json: its `yiem` property); null when the file holds none. */
  value: unknown;
  /** 1-based line of the key (`part: "key"`) or of the value at `specPath`, when known. */
  lineOf(specPath: SpecPath, part?: "key" | "value"): number | undefined;
  /** True when the value came from the spec cache (no line map: lineOf knows nothing). */
  cached?: boolean;
}

function isJsonFile(file: string): boolean {
  return path.extname(file) === ".json";
}

function isPackageJson(file: string): boolean {
  return path.basename(file) === "package.json";
}

/**
 * How a load uses the spec cache (./spec-cache.ts): the caller's cache (`scope`), and whether a
 * hit may be used (`read`; a parse is stored either way).
 */
export interface SpecCacheUse {
  scope: CacheScope;
  read: boolean;
}

/**
 * Parse `text` (the content of `file`); throws ConfigError on a syntax error. With `cache.read`, a
 * file parsed before with the same text is taken from the spec cache without loading `yaml`.
 */
export async function parseSpecText(file: string, text: string, cwd: string, cache: SpecCacheUse = { scope: processCacheScope(), read: false }): Promise<ParsedSpecFile> {
  if (cache.read) {
    const hit = cachedParse(cache.scope, file, text);
    if (hit) return { file, value: hit.value, lineOf: () => undefined, cached: true };
  }
  const parsed = await parseWithLines(file, text, cwd);
  storeParse(cache.scope, file, text, parsed.value);
  return parsed;
}

async function parseWithLines(file: string, text: string, cwd: string): Promise<ParsedSpecFile> {
  const yaml = await import("yaml");
  const lineCounter = new yaml.LineCounter();
  const json = isJsonFile(file);
  const doc = yaml.parseDocument(text, { lineCounter, prettyErrors: false, ...(json ? { schema: "json" } : {}) });
  const errorLine = doc.errors[0] ? lineCounter.linePos(doc.errors[0].pos[0]).line : undefined;
  let value: unknown;
  if (json) {
    try {
      value = JSON.parse(text);
    } catch (error) {
      const message = (error as Error).message;
      const position = /at position (\d+)/.exec(message);
      const line = position ? lineCounter.linePos(Number(position[1])).line : errorLine;
      const reason = message.replace(/, (\.\.\.)?".*" is not valid JSON$/s, "").replace(/ in JSON at position \d+.*$/s, "");
      throw fileError(`invalid JSON: ${reason}`, { file, line, cwd });
    }
  } else {
    const first = doc.errors[0];
    if (first) {
      const reason = first.message.split(/ at line \d+/)[0];
      throw fileError(`YAML syntax error: ${reason}`, { file, line: errorLine, cwd });
    }
    value = doc.toJS({ maxAliasCount: 100 });
  }
  const prefix: SpecPath = isPackageJson(file) ? ["yiem"] : [];
  if (prefix.length) {
    value = value && typeof value === "object" ? ((value as Record<string, unknown>).yiem ?? null) : null;
  }
  const located = doc.errors.length === 0 ? doc : null;
  return {
    file,
    value: value ?? null,
    lineOf: (specPath, part = "value") =>
      located ? findLine(yaml, located, lineCounter, [...prefix, ...specPath], part) : undefined,
  };
}

type YamlModule = typeof import("yaml");

/** Walk the document to the node at `specPath`; fall back to the deepest node found. */
function findLine(
  yaml: YamlModule,
  doc: Document,
  lineCounter: LineCounter,
  specPath: SpecPath,
  part: "key" | "value",
): number | undefined {
  let node: unknown = doc.contents;
  let keyNode: unknown;
  for (const segment of specPath) {
    let next: unknown;
    if (yaml.isMap(node)) {
      const pair = node.items.find((item) => yaml.isScalar(item.key) && String(item.key.value) === String(segment));
      if (pair) {
        keyNode = pair.key;
        next = pair.value ?? pair.key;
      }
    } else if (yaml.isSeq(node) && typeof segment === "number") {
      next = node.items[segment];
      keyNode = next;
    }
    if (!next) break;
    node = next;
  }
  const target = (part === "key" && keyNode ? keyNode : node) as YamlNode | null;
  const offset = target?.range?.[0];
  return offset === undefined ? undefined : lineCounter.linePos(offset).line;
}
