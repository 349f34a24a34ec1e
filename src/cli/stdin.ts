/**
 * Reading the prompt's stdin part. Rules (CONTRACT §4):
 * - stdin is read only when it is a pipe, a file or a socket; never a TTY, never when closed;
 * - with no prompt argument, stdin is read to its end;
 * - with a prompt argument, stdin is read too, but when it yields neither data nor end-of-file
 *   within the grace period it is ignored, so an inherited pipe that never closes cannot hang.
 */
import { fstatSync } from "node:fs";

/** How long a prompt-given run waits for piped stdin to show any sign of life. */
export const STDIN_GRACE_MS = 1000;

export function stdinIsReadable(fd = 0): boolean {
  try {
    const stats = fstatSync(fd);
    return stats.isFIFO() || stats.isFile() || stats.isSocket();
  } catch {
    return false;
  }
}

export interface ReadStdinOptions {
  /** When set, give up (returning null) if nothing at all arrives within this many ms. */
  graceMs?: number;
  stream?: NodeJS.ReadStream;
}

/** stdin's whole text, or null when stdin is not to be read (TTY, closed, or silent past the grace). */
export async function readStdin(options: ReadStdinOptions = {}): Promise<string | null> {
  const stream = options.stream ?? process.stdin;
  if (!options.stream && !stdinIsReadable()) return null;
  return new Promise((resolvePromise, rejectPromise) => {
    const chunks: Buffer[] = [];
    let sawActivity = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (value: string | null) => {
      if (timer) clearTimeout(timer);
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("error", onError);
      if (value === null) {
        stream.pause();
        // Let the process exit although the pipe stays open.
        (stream as unknown as { unref?: () => void }).unref?.();
        stream.destroy();
      }
      resolvePromise(value);
    };
    const onData = (chunk: Buffer) => {
      sawActivity = true;
      if (timer) {
        clearTimeout(timer);
        timer = undefined;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish(Buffer.concat(chunks).toString("utf8"));
    const onError = (error: Error) => {
      if (timer) clearTimeout(timer);
      rejectPromise(error);
    };
    stream.on("data", onData);
    stream.once("end", onEnd);
    stream.once("error", onError);
    if (options.graceMs !== undefined) {
      timer = setTimeout(() => {
        if (!sawActivity) finish(null);
      }, options.graceMs);
    }
  });
}

/** Joins the prompt words and piped context the way `git diff | yiem run "review this"` expects. */
export function composePrompt(words: string[], stdinText: string | null): string {
  const prompt = words.join(" ").trim();
  const context = stdinText?.replace(/\s+$/, "") ?? "";
  if (prompt && context) return `${prompt}\n\n${context}`;
  return prompt || context;
}
