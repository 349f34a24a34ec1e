/**
 * Usage errors in yiem's words (docs/cli.md, "Usage errors"). yargs validates the command line;
 * its English messages are rewritten here, with what the user typed and the nearest fix. Rules:
 * - an unknown flag is named as typed, with the command, and with the nearest flag of that command
 *   when one is close (../nearest-name.ts: a typo, or a unique prefix; never another word):
 *   `unknown flag --modle for yiem run (did you mean --model?)`;
 * - an unknown word where a subcommand is expected: `unknown command "lst" for yiem tools (did you
 *   mean list?)`; any other extra word: `unexpected argument "x" for yiem config`;
 * - a value outside a flag's choices: `--output must be one of text, json (got "xml")`, the words
 *   docs/spec.md uses for the flags checked later (`--max-turns must be an integer >= 1 (got "ten")`);
 * - a missing positional: `missing <name> (usage: yiem tools call <name> [options])`, also a list
 *   (`<ids...>`); a missing required flag: `missing --older-than for yiem sessions prune`;
 * - a string flag given no value (last, or followed by another flag): `--model needs a value`;
 * - no command but a flag yiem does not know there: the flag first, then the missing command;
 * - any other message is kept as it is.
 */

import { isCloseName, nearestName } from "../nearest-name.js";

/** What the failing command accepts, read from yargs at the time of the failure. */
export interface CommandShape {
  /** The command path, e.g. `["tools", "call"]`. */
  commands: string[];
  /** The command's own usage, e.g. `call <name>` (yargs' last `fullCommands` entry). */
  usage?: string;
  /** The command's flags and their aliases, without dashes. */
  flags: string[];
  /** The command's subcommands (empty for a leaf command). */
  subcommands: string[];
}

/** yargs' parser options, as much of them as the shape needs. */
export interface YargsOptions {
  key: Record<string, unknown>;
  alias: Record<string, string[]>;
  string: string[];
  number?: string[];
  array?: string[];
}

/** The shape of the command yargs is at, from its instance (called while it validates). */
export function commandShape(yargs: object): CommandShape {
  const cli = yargs as {
    getOptions(): unknown;
    getInternalMethods(): { getContext(): unknown; getCommandInstance(): { getCommands(): string[] } };
  };
  const options = cli.getOptions() as YargsOptions;
  const internals = cli.getInternalMethods();
  const context = internals.getContext() as { commands?: string[]; fullCommands?: string[] };
  const usage = context.fullCommands?.at(-1);
  const positionals = new Set([...(usage ?? "").matchAll(/[<[]([\w-]+)/g)].map((m) => m[1]));
  const flags = [...Object.keys(options.key), ...Object.values(options.alias).flat()].filter((f) => !positionals.has(f));
  return {
    commands: context.commands ?? [],
    usage,
    flags: [...new Set(flags)],
    subcommands: internals.getCommandInstance().getCommands(),
  };
}

/** yargs' message `message` for the command line `args`, in yiem's words. */
export function describeUsageError(message: string, args: string[], shape: CommandShape): string {
  const where = shape.commands.length ? ` for yiem ${shape.commands.join(" ")}` : "";
  const unknown = /^Unknown arguments?: (.*)$/s.exec(message);
  if (unknown) return describeUnknown(unknown[1].split(", "), args, shape, where);
  const recommended = /^Did you mean (.+)\?$/.exec(message);
  if (recommended) {
    // yargs recommends any command within 3 edits; yiem only one that is close by its own rule.
    const word = positionalWords(args)[shape.commands.length] ?? "";
    const close = isCloseName(word, recommended[1]);
    return `unknown command ${JSON.stringify(word)}${where}${close ? ` (did you mean ${recommended[1]}?)` : ""}`;
  }
  if (/^Name a (tools )?command\b/.test(message)) {
    // yargs asks for a command before it looks at flags: `yiem --hlep` names the flag first.
    const strays = args
      .filter((a) => /^--?[^-]/.test(a))
      .map((a) => a.replace(/^--?/, "").split("=")[0])
      .filter((name) => !shape.flags.includes(name) && !shape.flags.includes(name.replace(/^no-/, "")));
    if (strays.length > 0) return `${describeUnknown(strays, args, shape, where)}; ${message[0].toLowerCase()}${message.slice(1).replace(/\.$/, "")}`;
  }
  if (message.startsWith("Invalid values:")) return describeChoices(message);
  if (/^Not enough non-option arguments/.test(message) && shape.usage) {
    const missing = [...shape.usage.matchAll(/<[\w-]+(?:\.\.\.)?>/g)].map((m) => m[0]);
    if (missing.length > 0) {
      const path = [...shape.commands.slice(0, -1), shape.usage].join(" ");
      return `missing ${missing.join(" ")} (usage: yiem ${path} [options])`;
    }
  }
  const required = /^Missing required arguments?: (.*)$/.exec(message);
  if (required) return `missing ${required[1].split(", ").map((name) => `--${name}`).join(", ")}${where}`;
  return message;
}

function describeUnknown(names: string[], args: string[], shape: CommandShape, where: string): string {
  const listed = new Set(names);
  const problems: string[] = [];
  for (const name of names) {
    // yargs lists `max-turns` and `maxTurns` for one unknown `--max-turns`.
    if (/[A-Z]/.test(name) && listed.has(kebab(name)) && !args.some((a) => flagName(a) === name)) continue;
    const typed = typedFlag(name, args);
    if (!typed) {
      const words = positionalWords(args);
      const isCommandSlot = shape.subcommands.length > 0 && words[shape.commands.length] === name;
      problems.push(isCommandSlot ? `unknown command ${JSON.stringify(name)}${where}` : `unexpected argument ${JSON.stringify(name)}${where}`);
      continue;
    }
    const suggestion = nearestFlag(typed, shape.flags);
    problems.push(`unknown flag ${typed}${where}${suggestion ? ` (did you mean ${suggestion}?)` : ""}`);
  }
  return problems.join("; ");
}

/** `--name`, `--no-name` or `-n` as it appears in `args`; undefined when `name` is not a flag there. */
function typedFlag(name: string, args: string[]): string | undefined {
  for (const arg of args) {
    if (arg === "--") break;
    const long = flagName(arg);
    if (long === name) return `--${name}`;
    if (long === `no-${name}`) return `--no-${name}`;
    if (name.length === 1 && /^-[^-]/.test(arg) && arg.slice(1).split("=")[0].includes(name)) return `-${name}`;
  }
  return undefined;
}

/** The name of a `--name` or `--name=value` argument. */
function flagName(arg: string): string | undefined {
  return /^--([^=]+)/.exec(arg)?.[1];
}

/** The words of `args` that are not flags (values of flags included: only the leading ones are used). */
function positionalWords(args: string[]): string[] {
  return args.filter((a) => !a.startsWith("-"));
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** The known flag nearest to `typed` (`--modle` → `--model`), or undefined when none is close (../nearest-name.ts). */
export function nearestFlag(typed: string, flags: string[]): string | undefined {
  const negated = typed.startsWith("--no-");
  const name = typed.replace(/^--?(no-)?/, "");
  const best = nearestName(name, flags.filter((f) => f.length > 1 && !/[A-Z]/.test(f)));
  return best ? `--${negated ? "no-" : ""}${best}` : undefined;
}

/** yargs' "Invalid values" block as one `--flag must be one of …` phrase per flag. */
function describeChoices(message: string): string {
  const problems: string[] = [];
  for (const line of message.split("\n").slice(1)) {
    const match = /Argument: (.+?), Given: (.*), Choices: (.*)$/.exec(line.trim());
    if (!match) continue;
    const [, name, given, choices] = match;
    const dashes = name.length === 1 ? "-" : "--";
    const allowed = choices.split(", ").map((c) => c.replace(/^"(.*)"$/, "$1")).join(", ");
    problems.push(`${dashes}${name} must be one of ${allowed} (got ${given})`);
  }
  return problems.length > 0 ? problems.join("; ") : message;
}

/** The flags a command line may repeat, every value kept in order (their help says "repeatable"). */
export const REPEATABLE_FLAGS: ReadonlySet<string> = new Set(["attach", "tool-dir", "mcp-config", "set", "allow-origin", "allow-tools", "deny-tools"]);

/**
 * Every other flag that takes a value and was given more than once takes its last value, in
 * `argv` itself (under its aliases too), as the named spec flags always did: yargs gives such a
 * flag an array, which a `String()` would join with commas (`-c a.yaml -c b.yaml` looked for the
 * file "a.yaml,b.yaml").
 */
export function keepLastOfRepeated(argv: Record<string, unknown>, options: YargsOptions): void {
  for (const key of new Set([...options.string, ...(options.number ?? [])])) {
    const names = [key, ...(options.alias[key] ?? [])];
    if (names.some((name) => REPEATABLE_FLAGS.has(name)) || (options.array ?? []).includes(key)) continue;
    for (const name of names) {
      const value = argv[name];
      if (Array.isArray(value) && value.length > 0) argv[name] = value[value.length - 1];
    }
  }
}

/**
 * The first string flag in `args` that was given no value: the last argument, or followed by
 * another flag (yargs then sets it to ""). `options` are the command's; undefined when all is well.
 */
export function missingFlagValue(args: string[], options: YargsOptions): string | undefined {
  // Flags that take a value: strings and numbers alike.
  const strings = new Set([...options.string, ...(options.number ?? [])]);
  for (const [key, aliases] of Object.entries(options.alias)) if (strings.has(key)) for (const alias of aliases) strings.add(alias);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") break;
    const name = /^--([^=]+)$/.exec(arg)?.[1] ?? /^-([a-zA-Z])$/.exec(arg)?.[1];
    if (!name || !strings.has(name)) continue;
    const next = args[i + 1];
    if (next === undefined || (next.startsWith("-") && next !== "-" && !/^-\d/.test(next))) return `${arg} needs a value`;
  }
  return undefined;
}
