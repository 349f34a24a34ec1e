/**
 * yargs' verdict on a command line, kept: setting yargs up and parsing costs a start ~5 ms
 * (docs/performance.md, "Twelfth pass"), and `tools list` or `config` in a script is the same
 * command line every time. Rules:
 * - an entry holds the arguments as yargs got them and the `argv` it returned, for the yiem
 *   bundle of one build (its content hash): any other build, or yiem running from src/, neither
 *   reads nor writes entries;
 * - only a successful parse is kept (no usage error, no help or version text), only when every
 *   value is plain JSON (no NaN, no functions), and only for commands whose words are few and
 *   repeat (`CACHED_COMMANDS`, by the line's command word, ./command-word.ts, which yargs' own
 *   verdict must confirm): `run` and `batch` lines carry prompts and file names, a new line
 *   every time, and the parse is a small part of what they do;
 * - entries live in the trusted cache folder `parse` (../cache-dir.ts) and are signed like every
 *   entry there; one whose signature, key or shape is wrong is ignored and rewritten.
 */
import { dirname, join } from "node:path";
import { cacheFolder, cacheSignature, processCacheScope, readCacheFile, signatureMatches, writeCacheFile } from "../cache-dir.js";
import { noteUsed, pruneCacheFolder } from "../cache-prune.js";
import { loadedBundleHash } from "../code-cache.js";
import { nameHash } from "../name-hash.js";
import { survivesJson } from "../plain-json.js";
import { commandWordOf } from "./command-word.js";

const TAG = "yiem-parse-1";
/** Command words (./command-word.ts) whose command lines are kept (see the rules). */
const CACHED_COMMANDS = new Set(["tools", "config", "sessions", "mcp", "doctor"]);
/** Longer command lines are not kept. */
const MAX_ARGS = 12;
const MAX_ARG_CHARS = 256;

/** Where the entry of `args` lives and what it stands for; null when nothing is kept for them. */
function entryOf(args: string[]): { file: string; key: string } | null {
  if (!CACHED_COMMANDS.has(commandWordOf(args)) || args.length > MAX_ARGS || args.some((arg) => arg.length > MAX_ARG_CHARS)) return null;
  const build = loadedBundleHash("yiem.cjs");
  if (build === undefined) return null;
  const folder = cacheFolder("parse");
  if (folder === null) return null;
  const key = JSON.stringify([build, args]);
  return { file: join(folder, `${nameHash(TAG, key)}.json`), key };
}

/** The `argv` yargs gave for `args` before, or undefined (rules above). Never throws. */
export function cachedParse(args: string[]): Record<string, unknown> | undefined {
  try {
    const entry = entryOf(args);
    if (entry === null) return undefined;
    const read = readCacheFile(entry.file);
    if (!read) return undefined;
    const [head, key, body, rest] = read.bytes.toString("utf8").split("\n");
    const [tag, signature, extra] = (head ?? "").split(" ");
    if (tag !== TAG || !signature || extra !== undefined || key !== entry.key || body === undefined || rest !== "") return undefined;
    if (!signatureMatches(processCacheScope(), signature, TAG, entry.key, body)) return undefined;
    const argv = JSON.parse(body) as unknown;
    if (!isArgv(argv)) return undefined;
    noteUsed(entry.file, read.stats);
    return argv;
  } catch {
    return undefined;
  }
}

/** Keeps `argv`, yargs' successful parse of `args`, when the rules allow. Never throws. */
export function keepParse(args: string[], argv: Record<string, unknown>): void {
  try {
    const entry = entryOf(args);
    // yargs' verdict must name the command word told before it ran: `--model tools run …` is a
    // run line (its option's value read as the word), and run lines are not kept.
    if (entry === null || !survivesJson(argv) || !Array.isArray(argv._) || String(argv._[0]) !== commandWordOf(args)) return;
    const body = JSON.stringify(argv);
    const signature = cacheSignature(processCacheScope(), TAG, entry.key, body);
    if (signature === null) return;
    writeCacheFile(entry.file, `${TAG} ${signature}\n${entry.key}\n${body}\n`);
    pruneCacheFolder(dirname(entry.file));
  } catch {
    // not kept: the next start parses again
  }
}

/** An argv as yargs returns it: an object whose `_` is a list of its words. */
function isArgv(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Array.isArray((value as { _?: unknown })._);
}

