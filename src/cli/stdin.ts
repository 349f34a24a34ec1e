/**
 * Reading the prompt's stdin part. Rules (CONTRACT §4, docs/cli.md "The prompt and stdin"):
 * - `auto` (the default): stdin is read only when it is a pipe, a file or a socket; never a TTY,
 *   never when closed. With no prompt words it is read to its end. With prompt words, a pipe that
 *   yields neither data nor end-of-file within the grace (STDIN_GRACE_MS) is ignored, so an
 *   inherited pipe that never writes cannot hang a run; the caller reports that as a warning.
 * - `wait` (`--stdin`, or a prompt word `-`): stdin is read to its end with no grace, also from a
 *   terminal (until Ctrl-D); only the run's deadline or a signal bounds the wait.
 * - `never` (`--no-stdin`): stdin is not touched.
 * - Once the first byte has arrived, stdin is always read to its end, however long it pauses.
 */
import type { CliIo } from "./io.js";

/**
 * How long a prompt-given run waits for piped stdin to show any sign of life: long enough for a
 * slow producer's first output (`git diff main...HEAD` on a large repository, `kubectl logs`),
 * short enough that an inherited pipe that never writes costs a cron job only a few seconds.
 */
export const STDIN_GRACE_MS = 5000;

export type StdinMode = "auto" | "wait" | "never";



export interface ReadStdinOptions {
  /** When set, give up (returning `ignored`) if nothing at all arrives within this many ms. */
  graceMs?: number;
  /** `wait` also reads a terminal; `never` reads nothing. Default `auto`. */
  mode?: StdinMode;
  /** Called once if stdin has not ended after `waitingAfterMs` (e.g. to tell a person why nothing happens). */
  onWaiting?: () => void;
  waitingAfterMs?: number;
  /** The call's stdin and what it is (../io.ts). */
  io: Pick<CliIo, "stdin" | "stdinKind">;
}

export type StdinResult =
  /** stdin was read to its end. */
  | { kind: "text"; text: string }
  /** stdin was not read: a TTY in `auto`, closed, or `never`. */
  | { kind: "none" }
  /** stdin sent nothing within the grace and was left unread. */
  | { kind: "ignored"; graceMs: number };

/** Reads stdin by the module rules. */
export async function readStdin(options: ReadStdinOptions): Promise<StdinResult> {
  const mode = options.mode ?? "auto";
  if (mode === "never") return { kind: "none" };
  const kind = options.io.stdinKind;
  if (kind !== "readable" && !(mode === "wait" && kind === "terminal")) return { kind: "none" };
  // Only now: building process.stdin for /dev/null or a file loads Node's file streams.
  const stream = options.io.stdin;
  const graceMs = mode === "wait" ? undefined : options.graceMs;
  return new Promise((resolvePromise, rejectPromise) => {
    const chunks: Buffer[] = [];
    let sawActivity = false;
    let grace: NodeJS.Timeout | undefined;
    let waiting: NodeJS.Timeout | undefined;
    const stopTimers = () => {
      if (grace) clearTimeout(grace);
      if (waiting) clearTimeout(waiting);
    };
    const finish = (value: StdinResult) => {
      stopTimers();
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("error", onError);
      if (value.kind === "ignored") {
        stream.pause();
        // Let the process exit although the pipe stays open.
        (stream as unknown as { unref?: () => void }).unref?.();
        (stream as unknown as { destroy?: () => void }).destroy?.();
      }
      resolvePromise(value);
    };
    const onData = (chunk: Buffer) => {
      sawActivity = true;
      if (grace) {
        clearTimeout(grace);
        grace = undefined;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish({ kind: "text", text: Buffer.concat(chunks).toString("utf8") });
    const onError = (error: Error) => {
      stopTimers();
      rejectPromise(error);
    };
    stream.on("data", onData);
    stream.once("end", onEnd);
    stream.once("error", onError);
    if (graceMs !== undefined) {
      grace = setTimeout(() => {
        if (!sawActivity) finish({ kind: "ignored", graceMs });
      }, graceMs);
    }
    if (options.onWaiting) {
      waiting = setTimeout(options.onWaiting, options.waitingAfterMs ?? 1000);
      waiting.unref();
    }
  });
}

/**
 * Joins the prompt words and piped context the way `git diff | yiem run "review this"` expects:
 * the words, a blank line, then stdin (trailing whitespace trimmed). With `stdinAt` (the index of
 * the `-` word), stdin goes there instead, set off by blank lines from the words around it.
 */
export function composePrompt(words: string[], stdinText: string | null, stdinAt?: number): string {
  const context = stdinText?.replace(/\s+$/, "") ?? "";
  if (stdinAt !== undefined) {
    const before = words.slice(0, stdinAt).join(" ").trim();
    const after = words.slice(stdinAt + 1).join(" ").trim();
    return [before, context, after].filter((part) => part !== "").join("\n\n");
  }
  const prompt = words.join(" ").trim();
  if (prompt && context) return `${prompt}\n\n${context}`;
  return prompt || context;
}
