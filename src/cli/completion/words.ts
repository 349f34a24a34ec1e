/**
 * What shell completion knows of yiem's command line: the commands, and for each the flags with
 * what their value is. Rules:
 * - it mirrors the yargs definitions in ../main.ts (test/cli/completion.test.ts compares it with
 *   every command's `--help`, so a flag added there and not here fails a test);
 * - a flag's value kind says how its value completes: a file name, a folder name, `TEXT|@FILE`
 *   (a file name after `@`), tool names (comma-separated), fixed choices, or nothing;
 * - only real spellings are offered: `--config` and `-c`, never yargs' `--c`.
 */

/** How a flag's value completes; undefined: the flag takes no value. */
export type ValueKind = "file" | "dir" | "at-file" | "tools" | "free" | readonly string[];

export interface FlagInfo {
  /** `--long` name without dashes. */
  name: string;
  short?: string;
  value?: ValueKind;
  /** A boolean with a documented `--no-` form. */
  negatable?: boolean;
}

export interface CommandInfo {
  flags: FlagInfo[];
  subcommands?: Record<string, CommandInfo>;
  /** How the first positional word completes (`tools call <name>`). */
  positional?: "tools" | readonly string[];
}

const EVENTS = ["ndjson", "pretty", "github", "none"] as const;
const OUTPUT = ["text", "json"] as const;

const HELP: FlagInfo[] = [{ name: "help", short: "h" }, { name: "version", short: "V" }];

const COMMON: FlagInfo[] = [
  { name: "config", short: "c", value: "file" },
  { name: "tool-dir", value: "dir" },
  { name: "debug" },
  { name: "mcp-config", value: "file" },
  { name: "spec-mcp", negatable: true },
];

const SPEC_KEYS: FlagInfo[] = [
  { name: "temperature", value: "free" },
  { name: "max-tokens", value: "free" },
  { name: "budget", value: "free" },
  { name: "budget-usd", value: "free" },
  { name: "max-retries", value: "free" },
  { name: "api-key-env", value: "free" },
  { name: "set", value: "free" },
];

const MODEL: FlagInfo = { name: "model", short: "m", value: "free" };
const JSON_FLAG: FlagInfo = { name: "json" };

function command(flags: FlagInfo[], extra: Partial<CommandInfo> = {}): CommandInfo {
  return { flags: [...HELP, ...flags], ...extra };
}

export const COMMAND_TREE: Record<string, CommandInfo> = {
  run: command([
    ...COMMON, ...SPEC_KEYS, MODEL,
    { name: "base-url", value: "free" },
    { name: "system", value: "at-file" },
    { name: "append-system", value: "at-file" },
    { name: "tool-execution", value: ["sequential", "parallel"] },
    { name: "max-turns", value: "free" },
    { name: "tool-timeout", value: "free" },
    { name: "timeout", value: "free" },
    { name: "allow-tools", value: "tools" },
    { name: "deny-tools", value: "tools" },
    { name: "output", value: OUTPUT },
    { name: "output-schema", value: "file" },
    { name: "attach", short: "a", value: "file" },
    { name: "events", value: EVENTS },
    { name: "input-format", value: ["text", "ndjson"] },
    { name: "record", value: "file" },
    { name: "session", value: "file" },
    { name: "save", negatable: true },
    { name: "continue" },
    { name: "resume", value: "free" },
    { name: "fork" },
    { name: "session-id", value: "free" },
    { name: "wait", negatable: true },
    { name: "stdin", negatable: true },
    { name: "dry-run" },
    { name: "strict", negatable: true },
  ]),
  config: command([...COMMON, ...SPEC_KEYS, MODEL, JSON_FLAG]),
  doctor: command([...COMMON, ...SPEC_KEYS, MODEL, { name: "base-url", value: "free" }, JSON_FLAG]),
  init: command([{ name: "dir", value: "dir" }, { name: "example" }]),
  tools: command(COMMON, {
    subcommands: {
      list: command([...COMMON, JSON_FLAG]),
      new: command([
        ...COMMON,
        { name: "label", value: "free" },
        { name: "description", value: "free" },
        { name: "schema", value: "at-file" },
        { name: "code", value: "at-file" },
        { name: "parallel", negatable: true },
        { name: "command" },
        { name: "dir", value: "dir" },
        { name: "force" },
      ]),
      show: command(COMMON, { positional: "tools" }),
      call: command([...COMMON, { name: "args", value: "at-file" }, { name: "events", value: EVENTS }, { name: "output", value: OUTPUT }], { positional: "tools" }),
      check: command(COMMON),
    },
  }),
  mcp: command(COMMON, {
    subcommands: {
      list: command([...COMMON, JSON_FLAG]),
      serve: command([
        ...COMMON,
        { name: "http", value: "free" },
        { name: "token-env", value: "free" },
        { name: "allow-origin", value: "free" },
        { name: "agent", value: "free" },
        { name: "allow-tools", value: "tools" },
        { name: "deny-tools", value: "tools" },
        { name: "tool-timeout", value: "free" },
        { name: "events", value: ["ndjson", "github", "none"] },
        { name: "strict", negatable: true },
      ]),
    },
  }),
  sessions: command([], {
    subcommands: {
      list: command([JSON_FLAG]),
      show: command([JSON_FLAG]),
      rm: command([]),
      prune: command([{ name: "older-than", value: "free" }, { name: "dry-run" }]),
    },
  }),
  batch: command([
    ...COMMON, ...SPEC_KEYS, MODEL,
    { name: "output", short: "o", value: "file" },
    { name: "concurrency", short: "j", value: "free" },
    { name: "rate", value: "free" },
    { name: "timeout", value: "free" },
    { name: "batch-timeout", value: "free" },
    { name: "grace", value: "free" },
    { name: "resume" },
    { name: "shard", value: "free" },
    { name: "skip-bad-lines" },
    { name: "check", negatable: true },
    { name: "full-check" },
    { name: "prompt-template", value: "at-file" },
    { name: "events", value: EVENTS },
    { name: "base-url", value: "free" },
    { name: "system", value: "at-file" },
    { name: "append-system", value: "at-file" },
    { name: "attach", short: "a", value: "file" },
    { name: "output-schema", value: "file" },
    { name: "tool-execution", value: ["sequential", "parallel"] },
    { name: "max-turns", value: "free" },
    { name: "tool-timeout", value: "free" },
    { name: "allow-tools", value: "tools" },
    { name: "deny-tools", value: "tools" },
    { name: "strict", negatable: true },
  ], {
    subcommands: {
      merge: command([{ name: "output", short: "o", value: "file" }, { name: "input", value: "file" }]),
    },
  }),
  completion: command([], { positional: ["bash", "zsh", "fish"] }),
};

/** The shells `yiem completion` writes a script for. */
export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];
