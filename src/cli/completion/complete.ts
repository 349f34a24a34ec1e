/**
 * `yiem __complete WORD...`: the candidates for the last word, for the scripts of ./scripts.ts.
 * The words are those after `yiem` up to the cursor; the last one is the word being completed
 * (empty after a space). The answer, on stdout:
 * - line 1 is `KIND:PREFIX`: `words` (the candidates follow, one a line, already filtered by the
 *   word), `file` or `dir` (the shell completes file or folder names itself, for the part of the
 *   word after PREFIX, and puts PREFIX back: `@` of `--system @FILE`, `--config=`);
 * - tool names come from the resolved spec (`-c`, `--tool-dir` and the spec's folders, as `yiem
 *   tools list` loads them, without MCP servers, a model or the openai client); anything that
 *   fails to load simply offers nothing. Nothing is ever written to stderr: it would garble the prompt.
 */
import { cacheScopeOf } from "../../cache-dir.js";
import { COMMAND_TREE, type CommandInfo, type FlagInfo, type ValueKind } from "./words.js";

export interface Completion {
  kind: "words" | "file" | "dir";
  /** For file and dir: the part of the word before the file name. */
  prefix: string;
  words: string[];
}

/** Where the words so far put the cursor: the command, the flag whose value is completed, what is typed. */
interface Position {
  path: string[];
  info: CommandInfo | undefined;
  positionals: string[];
  /** The flag whose value the current word is, if any. */
  valueFlag?: FlagInfo;
  /** The typed part of the current word that the candidates must start with. */
  current: string;
  /** For `--flag=VALUE`: `--flag=`. */
  prefix: string;
  /** The values given so far to -c/--config and --tool-dir. */
  config?: string;
  toolDirs: string[];
}

function findFlag(info: CommandInfo | undefined, word: string): FlagInfo | undefined {
  if (!info) return undefined;
  if (word.startsWith("--")) {
    const name = word.slice(2);
    return info.flags.find((f) => f.name === name || (f.negatable && `no-${f.name}` === name));
  }
  if (/^-[A-Za-z]$/.test(word)) return info.flags.find((f) => f.short === word.slice(1));
  return undefined;
}

function locate(words: string[]): Position {
  // bash splits `--config=x` into `--config`, `=`, `x` (COMP_WORDBREAKS): join them back.
  const joined: string[] = [];
  let open = false;
  for (const word of words) {
    const last = joined.length - 1;
    if (word === "=" && last >= 0 && joined[last].startsWith("--") && !joined[last].includes("=")) {
      joined[last] += "=";
      open = true;
    } else if (open) {
      joined[last] += word;
      open = false;
    } else joined.push(word);
  }
  const typed = joined.length ? joined[joined.length - 1] : "";
  const before = joined.slice(0, -1);
  const position: Position = { path: [], info: undefined, positionals: [], current: typed, prefix: "", toolDirs: [] };
  let tree: Record<string, CommandInfo> | undefined = COMMAND_TREE;
  for (let i = 0; i < before.length; i++) {
    const word = before[i];
    if (word.startsWith("-") && word !== "-") {
      const eq = word.indexOf("=");
      const flag = findFlag(position.info, eq < 0 ? word : word.slice(0, eq));
      if (flag?.value === undefined || word.startsWith("--no-")) continue;
      const value = eq < 0 ? before[++i] : word.slice(eq + 1);
      if (value === undefined) {
        position.valueFlag = flag;
        break;
      }
      if (flag.name === "config") position.config = value;
      if (flag.name === "tool-dir") position.toolDirs.push(value);
      continue;
    }
    if (tree && tree[word] && position.positionals.length === 0) {
      position.path.push(word);
      position.info = tree[word];
      tree = position.info.subcommands;
      continue;
    }
    position.positionals.push(word);
  }
  if (!position.valueFlag && typed.startsWith("--") && typed.includes("=")) {
    const eq = typed.indexOf("=");
    const flag = findFlag(position.info, typed.slice(0, eq));
    if (flag?.value !== undefined) {
      position.valueFlag = flag;
      position.prefix = typed.slice(0, eq + 1);
      position.current = typed.slice(eq + 1);
    }
  }
  return position;
}

export async function complete(words: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Completion> {
  const at = locate(words);
  const words_ = (list: Iterable<string>, prefix = ""): Completion => ({
    kind: "words",
    prefix: "",
    words: [...new Set(list)].map((w) => prefix + w).filter((w) => w.startsWith(prefix + at.current)),
  });
  if (at.valueFlag) return completeValue(at.valueFlag.value!, at, cwd, env);
  if (at.current.startsWith("-")) {
    const flags = at.info ? at.info.flags : [{ name: "help", short: "h" }, { name: "version", short: "V" }];
    const long = flags.flatMap((f) => (f.negatable ? [`--${f.name}`, `--no-${f.name}`] : [`--${f.name}`]));
    const short = at.current.startsWith("--") ? [] : flags.flatMap((f) => (f.short ? [`-${f.short}`] : []));
    return words_([...long, ...short]);
  }
  if (!at.info) return words_(Object.keys(COMMAND_TREE));
  if (at.info.subcommands && at.path.length === 1) return words_(Object.keys(at.info.subcommands));
  if (at.positionals.length === 0 && at.info.positional) {
    return at.info.positional === "tools" ? words_(await toolNames(at, cwd, env)) : words_(at.info.positional);
  }
  return words_([]);
}

async function completeValue(kind: ValueKind, at: Position, cwd: string, env: NodeJS.ProcessEnv): Promise<Completion> {
  const choose = (list: string[], prefix = at.prefix): Completion => ({
    kind: "words",
    prefix: "",
    words: list.map((w) => prefix + w).filter((w) => w.startsWith(prefix + at.current)),
  });
  if (kind === "file" || kind === "dir") return { kind, prefix: at.prefix, words: [] };
  if (kind === "at-file") {
    if (at.current.startsWith("@")) return { kind: "file", prefix: `${at.prefix}@`, words: [] };
    return choose(at.current === "" ? ["@"] : []);
  }
  if (kind === "tools") {
    // A comma-separated list: complete its last item, keep the rest as typed.
    const comma = at.current.lastIndexOf(",");
    const head = at.prefix + at.current.slice(0, comma + 1);
    const names = await toolNames(at, cwd, env);
    const item = at.current.slice(comma + 1);
    return { kind: "words", prefix: "", words: names.filter((n) => n.startsWith(item)).map((n) => head + n) };
  }
  if (kind === "free") return choose([]);
  return choose([...kind]);
}

/** The names of the tools the resolved spec loads; none when anything fails. */
async function toolNames(at: Position, cwd: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  try {
    const [{ loadSpec }, { loadRegistry }, { guardChannels }] = await Promise.all([
      import("../../config/load.js"),
      import("../setup.js"),
      import("../../channels/guard.js"),
    ]);
    const spec = await loadSpec({
      cwd,
      configPath: at.config,
      env,
      overrides: at.toolDirs.length ? { toolDirs: at.toolDirs } : {},
      requireModel: false,
    });
    // Tool code's own output must not reach the shell.
    guardChannels({ onOutput: () => {}, onUncaught: () => {} });
    const loaded = await loadRegistry(spec, cacheScopeOf(env, cwd));
    return loaded.registry.infos().map((info) => info.name).sort();
  } catch {
    return [];
  }
}

/** The wire form of a completion (see the header). */
export function formatCompletion(completion: Completion): string {
  return [`${completion.kind}:${completion.prefix}`, ...completion.words].map((line) => `${line}\n`).join("");
}
