/**
 * The prompt of `yiem run` as the command line gives it: the words (before and after `--`), the
 * `-` word that says where stdin goes, the stdin flags, and the messages they make (CONTRACT §4;
 * docs/cli.md, "The prompt and stdin"). Reading stdin itself is ./stdin.ts.
 */
import type { ResolvedSpec } from "../config/types.js";
import { parseDuration } from "../config/duration.js";
import type { ChatMessage } from "../provider/types.js";
import { UsageError } from "../errors.js";
import { parseMessagesNdjson } from "./messages-input.js";
import { composePrompt, STDIN_GRACE_MS, type StdinMode, type StdinResult } from "./stdin.js";
import { STDIN_MARK } from "./stdin-mark.js";

export const NO_PROMPT = 'no prompt: give it as words (yiem run "…"), pipe it on stdin, or use --input-format ndjson';

/** The prompt as the command line gives it: the words, where stdin goes, and how stdin is read. */
export interface PromptInput {
  /** The words before `--` and every word after it, in order. */
  words: string[];
  /** The index in `words` of the `-` word (before `--`) that stands for stdin. */
  stdinAt?: number;
  stdinMode: StdinMode;
  /** How long piped stdin may stay silent when prompt words are given (STDIN_GRACE_MS, `YIEM_STDIN_GRACE`). */
  graceMs: number;
}

/** The prompt words and stdin flags, checked (a usage error names the clash). */
export function promptInput(argv: Record<string, unknown>, env: NodeJS.ProcessEnv): PromptInput {
  const before = ((argv.prompt as string[] | undefined) ?? []).map(String);
  const after = ((argv["--"] as string[] | undefined) ?? []).map(String);
  const dashes = before.flatMap((word, at) => (word === STDIN_MARK ? [at] : []));
  const flag = argv.stdin as boolean | undefined;
  if (dashes.length > 1) throw new UsageError("the prompt word - (stdin goes here) may appear only once; put a literal - after --");
  if (dashes.length === 1 && flag === false) throw new UsageError("the prompt word - reads stdin, which --no-stdin turns off; drop one of them");
  if (dashes.length === 1 && argv["input-format"] === "ndjson") {
    throw new UsageError("the prompt word - puts stdin text into the prompt, but --input-format ndjson reads stdin as messages; drop one of them");
  }
  const stdinMode: StdinMode = flag === false ? "never" : flag === true || dashes.length === 1 ? "wait" : "auto";
  return { words: [...before.map((word) => (word === STDIN_MARK ? "-" : word)), ...after], stdinAt: dashes[0], stdinMode, graceMs: stdinGraceMs(env) };
}

function stdinGraceMs(env: NodeJS.ProcessEnv): number {
  const value = env.YIEM_STDIN_GRACE;
  if (value === undefined || value === "") return STDIN_GRACE_MS;
  try {
    return parseDuration(value);
  } catch {
    throw new UsageError(`YIEM_STDIN_GRACE=${JSON.stringify(value)} is not a duration (use milliseconds like 5000 or a unit: 500ms, 5s, 1m)`);
  }
}

/** The warning for piped stdin that was left unread (see ./stdin.ts). */
export function stdinIgnoredWarning(graceMs: number): { message: string; code: "stdinIgnored" } {
  return {
    code: "stdinIgnored",
    message: `stdin sent nothing in ${formatSeconds(graceMs)}, so the run went on without it: use --stdin to wait for a slow producer, or --no-stdin (or </dev/null) to skip stdin`,
  };
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/**
 * System prompt, the saved session, then the new prompt (words + stdin, or NDJSON messages, whose
 * calls of a tool `isToolAllowed` refuses are a usage error).
 */
export function initialMessages(
  argv: Record<string, unknown>,
  spec: ResolvedSpec,
  input: PromptInput,
  stdin: StdinResult,
  session: ChatMessage[],
  isToolAllowed: (name: string) => boolean,
): ChatMessage[] {
  const stdinText = stdin.kind === "text" ? stdin.text : null;
  const messages: ChatMessage[] = [];
  if (spec.systemPrompt) messages.push({ role: "system", content: spec.systemPrompt });
  messages.push(...session);
  if (argv["input-format"] === "ndjson") {
    const words = composePrompt(input.words, null);
    if (words) messages.push({ role: "user", content: words });
    messages.push(...parseMessagesNdjson(stdinText ?? "", isToolAllowed));
  } else {
    const prompt = composePrompt(input.words, stdinText, input.stdinAt);
    if (prompt) messages.push({ role: "user", content: prompt });
  }
  if (!messages.some((m) => m.role === "user")) {
    throw new UsageError(NO_PROMPT);
  }
  return messages;
}
