/**
 * The input of `yiem batch` as the command takes it (./batch.ts): a named file checked before
 * anything runs (`inputFileProblem`), or stdin copied to a private temporary file (`spoolStdin`).
 *
 * Rules:
 * - a FIFO is refused as a named input: the batch reads its input twice (the check pass, then the
 *   run); piped to `-`, it is copied first;
 * - the copy is streamed, removed by the batch's cleanup, and a signal ends it at once (a producer
 *   that keeps the pipe open cannot hold the batch): stdin is then destroyed, not drained.
 */
import { createWriteStream, statSync } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileKind } from "../../regular-file.js";
import { UsageError } from "../../errors.js";
import type { CliIo } from "../io.js";

/** Why the named input `file` (as given: `given`) cannot be a batch's input; [] when it can. */
export function inputFileProblem(file: string, given: string): string[] {
  try {
    const stats = statSync(file, { throwIfNoEntry: false });
    if (!stats) return [`input ${given}: not found`];
    if (stats.isDirectory()) return [`input ${given} is a folder, not a file`];
    if (!stats.isFile() && !stats.isFIFO()) return [`input ${given} is not a regular file (${fileKind(stats)})`];
    if (stats.isFIFO()) return [`input ${given} is a FIFO: it is read twice (checked, then run); pipe it to - instead`];
  } catch (error) {
    return [`input ${given}: ${(error as Error).message}`];
  }
  return [];
}


/** stdin copied to a private temporary file (see module rules); the file's path. */
export async function spoolStdin(io: CliIo, cleanup: Array<() => Promise<unknown>>, stop: AbortSignal): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "yiem-batch-"));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, "input.jsonl");
  const out = createWriteStream(file, { flags: "wx", mode: 0o600 });
  if (io.stdinKind !== "readable") throw new UsageError("input -: stdin is not a pipe or a file (pipe the input in, or name a file)");
  // A signal ends the copy at once: a producer that keeps writing (or never closes the pipe) cannot hold the batch.
  const stopped = new Promise<null>((resolve) => (stop.aborted ? resolve(null) : stop.addEventListener("abort", () => resolve(null), { once: true })));
  const chunks = (io.stdin as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = chunks.next();
      next.catch(() => {});
      const step = await Promise.race([next, stopped]);
      if (step === null || step.done) break;
      if (!out.write(step.value)) await once(out, "drain");
    }
  } finally {
    // Not `chunks.return()`: it would wait for the read in flight, which may never end.
    if (stop.aborted) {
      io.stdin.unref?.();
      io.stdin.destroy?.();
    }
  }
  out.end();
  await once(out, "finish");
  await stat(file);
  return file;
}
