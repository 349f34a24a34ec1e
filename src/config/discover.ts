/**
 * Finding the spec file: cosmiconfig 9 from `cwd` up to the project root (the first folder
 * holding a package.json), trying SEARCH_PLACES in order in each folder; or exactly the file
 * `-c` names. An existing spec file counts even when empty; package.json counts only with a
 * `yiem` property.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { requireCjs } from "../require-cjs.js";
import { ConfigError, displayPath } from "./errors.js";
import { parseSpecText, type ParsedSpecFile } from "./parse.js";

export const SEARCH_PLACES = [
  "agent.config.yaml",
  "agent.config.yml",
  "agent.config.json",
  ".yiemrc",
  ".yiemrc.yaml",
  ".yiemrc.json",
  "package.json",
] as const;

/** Search from `cwd` upward; null when no spec exists. */
export async function findSpecFile(cwd: string, useCache = false): Promise<ParsedSpecFile | null> {
  const { cosmiconfig } = requireCjs("cosmiconfig") as typeof import("cosmiconfig");
  const parsedFiles = new Map<string, ParsedSpecFile>();
  // The loader parses (so syntax errors carry file and line) and hands cosmiconfig a stand-in,
  // which keeps cosmiconfig's own `$import` merging out of the spec.
  const loader = async (filepath: string, content: string): Promise<object> => {
    const parsed = await parseSpecText(filepath, content, cwd, useCache);
    parsedFiles.set(filepath, parsed);
    if (path.basename(filepath) === "package.json") return parsed.value === null ? {} : { yiem: {} };
    return {};
  };
  const explorer = cosmiconfig("yiem", {
    searchStrategy: "project",
    searchPlaces: [...SEARCH_PLACES],
    packageProp: "yiem",
    ignoreEmptySearchPlaces: false,
    cache: false,
    loaders: { ".yaml": loader, ".yml": loader, ".json": loader, noExt: loader },
  });
  const result = await explorer.search(cwd);
  if (!result) return null;
  return parsedFiles.get(result.filepath) ?? parseSpecText(result.filepath, "", cwd);
}

/** Load exactly `file` (relative to cwd), as `-c/--config` asks. */
export async function readSpecFile(file: string, cwd: string, useCache = false): Promise<ParsedSpecFile> {
  const absolute = path.resolve(cwd, file);
  let text: string;
  try {
    text = await readFile(absolute, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "not found" : code === "EISDIR" ? "is a folder" : `cannot be read (${code})`;
    throw new ConfigError(`config file ${displayPath(absolute, cwd)} ${reason}`, { file: absolute, key: "--config" });
  }
  return parseSpecText(absolute, text, cwd, useCache);
}
