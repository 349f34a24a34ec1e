/**
 * The results file of `yiem batch`, which is also its ledger (docs/batch.md, "Results" and
 * "Resume").
 *
 * Rules:
 * - One writer per batch: results are queued and appended by one loop, each as a complete line
 *   (`JSON.stringify` + `\n`), several queued lines joined into one write. Lines are never
 *   interleaved or torn by concurrency; a kill can tear only the last line.
 * - fsync: the file is synced (fdatasync) at most once a second while results come, and at the
 *   end. A killed process loses no written line (the OS has it); a machine that loses power may
 *   lose the last second's lines, which `--resume` then runs again.
 * - Without `--resume`, a results file that exists and is not empty is refused (exit 2): a batch
 *   never overwrites or mixes into earlier results by accident.
 * - `--resume`: every complete line must be a result, else an error naming the line (the file is
 *   not a results file, or was edited), and nothing in the file is changed. Only then is a torn
 *   last line (no newline at the end) cut off (the file truncated after its last newline), and
 *   only when it is what a kill leaves: the start of a result line as the writer writes one
 *   (`{"id":`, not JSON yet). A last line without its newline that is JSON already is a whole
 *   line: a result gets its newline back; anything else is not a result (an error, as above:
 *   e.g. `-o` naming an input file by mistake). Then ids with a final status (types.ts
 *   FINAL_STATUSES) are skipped. Lines with another status (`aborted`) are dropped from the file
 *   (rewritten through a temporary file and a rename) so that the id's new result is its only line.
 */
import { appendFile, open, rename, stat, truncate, type FileHandle } from "node:fs/promises";
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { UsageError } from "../errors.js";
import { atomicTempPath } from "../atomic-write.js";
import { LineReader, MAX_LINE_BYTES, readTextLines, textLines } from "./lines.js";
import { FINAL_STATUSES, type BatchResult, type BatchStatus } from "./types.js";

const SYNC_EVERY_MS = 1000;

export interface ResultsWriter {
  /** Queues one result line. */
  write(result: BatchResult): void;
  /** Writes what is queued, syncs and closes; rejects when a write failed. */
  close(): Promise<void>;
  /** The first write failure, if any (results are then no longer saved). */
  readonly failure: Error | undefined;
}

/** What an earlier run of the batch left in the results file. */
export interface Ledger {
  /** Ids with a final status, and the status. */
  done: Map<string, BatchStatus>;
  /** Whether a torn last line was cut off. */
  repairedTornLine: boolean;
  /** How many lines without a final status were dropped. */
  dropped: number;
}

/** Checks the results file for a new batch (refused when not empty), or reads and repairs it for `--resume`. */
export async function openLedger(file: string, resume: boolean): Promise<Ledger> {
  const ledger: Ledger = { done: new Map(), repairedTornLine: false, dropped: 0 };
  const size = await stat(file).then((s) => {
    if (!s.isFile()) throw new UsageError(`-o ${file}: not a regular file`);
    return s.size;
  }, (error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return -1;
    throw new UsageError(`-o ${file}: cannot be read (${error.code ?? error.message})`);
  });
  if (size <= 0) return ledger;
  if (!resume) throw new UsageError(`-o ${file} already holds results: add --resume to continue that batch, or name a new file`);
  const whole = await lastNewlineEnd(file, size);
  let pending = 0;
  let lines = 0;
  // The complete lines first; a last line without its newline is judged after them (module rules).
  for await (const input of textLines(await LineReader.open(file, { start: 0, end: whole }))) {
    lines = input.line;
    if ("tooLong" in input) throw notResults(file, input.line, "the line is too long");
    if (input.text.trim() === "") continue;
    const { id, status } = resultKey(file, input.line, input.text);
    if (FINAL_STATUSES.has(status)) ledger.done.set(id, status);
    else pending++;
  }
  if (whole < size) {
    if (size - whole > MAX_LINE_BYTES) throw notResults(file, lines + 1, "the line is too long");
    const result = tornLineResult(file, lines + 1, await readTail(file, whole, size));
    if (result === undefined) {
      await truncate(file, whole);
      ledger.repairedTornLine = true;
    } else {
      await appendFile(file, "\n");
      if (FINAL_STATUSES.has(result.status)) ledger.done.set(result.id, result.status);
      else pending++;
    }
  }
  if (pending > 0) {
    await dropUnfinished(file);
    ledger.dropped = pending;
  }
  return ledger;
}

/** The id and status of one results line; throws naming the line when it is not a result. */
export function resultKey(file: string, line: number, text: string): { id: string; status: BatchStatus } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw notResults(file, line, "not JSON");
  }
  const result = value as Partial<BatchResult> | null;
  if (!result || typeof result !== "object" || typeof result.id !== "string" || typeof result.status !== "string" || !["ok", "error", "limit", "aborted"].includes(result.status)) {
    throw notResults(file, line, 'not a result (it needs "id" and "status")');
  }
  return { id: result.id, status: result.status };
}

function notResults(file: string, line: number, reason: string): UsageError {
  return new UsageError(`${file} line ${line}: ${reason}: is this a yiem batch results file?`);
}

/** The offset right after the file's last newline (0 when it has none); `size` when it ends with one. */
async function lastNewlineEnd(file: string, size: number): Promise<number> {
  const handle = await open(file, "r");
  try {
    const chunk = Buffer.alloc(64 * 1024);
    let end = size;
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const { bytesRead } = await handle.read(chunk, 0, end - start, start);
      const at = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (at >= 0) return start + at + 1;
      end = start;
    }
    return 0;
  } finally {
    await handle.close();
  }
}

/** The bytes `start`..`end` of `file` as text (the last line, which has no newline). */
async function readTail(file: string, start: number, end: number): Promise<string> {
  const handle = await open(file, "r");
  try {
    const bytes = Buffer.alloc(end - start);
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, start);
    return bytes.toString("utf8", 0, bytesRead).replace(/\r$/, "");
  } finally {
    await handle.close();
  }
}

/** How the writer starts every line (JSON.stringify of a result: its id first). */
const RESULT_LINE_START = '{"id":';

/**
 * The last line of `file` (line `line`), which has no newline (see module rules): undefined when it
 * is a torn result line (to be cut off); the result when it is a whole one; else an error.
 */
function tornLineResult(file: string, line: number, text: string): { id: string; status: BatchStatus } | undefined {
  try {
    JSON.parse(text);
  } catch {
    if (text.startsWith(RESULT_LINE_START)) return undefined;
    throw notResults(file, line, "the last line has no newline and is not the start of a result");
  }
  return resultKey(file, line, text);
}

/** Rewrites the file with its final lines only (temporary file, then rename). */
async function dropUnfinished(file: string): Promise<void> {
  const temp = atomicTempPath(file);
  const out = createWriteStream(temp, { flags: "wx", mode: 0o600 });
  for await (const input of readTextLines(file)) {
    if ("tooLong" in input || input.text.trim() === "") continue;
    if (!FINAL_STATUSES.has(resultKey(file, input.line, input.text).status)) continue;
    if (!out.write(`${input.text}\n`)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
  const handle = await open(temp, "r+");
  await handle.datasync().finally(() => handle.close());
  await rename(temp, file);
}

/** The one writer of the results file (see module rules). */
export async function openResultsWriter(file: string): Promise<ResultsWriter> {
  const handle: FileHandle = await open(file, "a", 0o644).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`-o ${file}: cannot be written (${error.code ?? error.message})`);
  });
  let queue: string[] = [];
  let writing: Promise<void> | null = null;
  let failure: Error | undefined;
  let lastSync = Date.now();
  const drain = async () => {
    while (queue.length > 0 && !failure) {
      const chunk = queue.join("");
      queue = [];
      try {
        await handle.write(chunk);
        if (Date.now() - lastSync >= SYNC_EVERY_MS) {
          lastSync = Date.now();
          await handle.datasync();
        }
      } catch (error) {
        failure = new Error(`could not write the results to ${file}: ${(error as Error).message}`);
      }
    }
    writing = null;
  };
  return {
    write(result) {
      if (failure) return;
      queue.push(`${JSON.stringify(result)}\n`);
      writing ??= drain();
    },
    async close() {
      while (writing) await writing;
      try {
        if (!failure) await handle.datasync();
      } finally {
        await handle.close();
      }
      if (failure) throw failure;
    },
    get failure() {
      return failure;
    },
  };
}
