/**
 * Atomic file writes: the data goes to a temp file in the same folder (named `.yiem-tmp-*`, which
 * the tool loader skips), is flushed, then renamed over the target. A crash leaves either the
 * old file or the new one, never half of one. The folder is created when missing. `mode` is
 * the mode a new file is opened with (the umask applies); `exactMode` is set exactly on the temp
 * file before the rename, whatever the umask. The temp file is always a new one (opened `wx`),
 * never an existing file. `writeFileAtomicSync` is the same rule for callers that cannot await
 * (the module cache, written from synchronous loading code).
 */
import { randomHex } from "./random-id.js";
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { mkdir, open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** The temp file a write of `file` goes through (`.yiem-tmp-<name>-<random>`, beside it). */
export function atomicTempPath(file: string): string {
  return join(dirname(file), `.yiem-tmp-${basename(file)}-${randomHex(6)}`);
}

export async function writeFileAtomic(file: string, data: string, options: { mode?: number; exactMode?: number } = {}): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temp = atomicTempPath(file);
  const handle = await open(temp, "wx", options.exactMode ?? options.mode ?? 0o644);
  try {
    if (options.exactMode !== undefined) await handle.chmod(options.exactMode);
    await handle.writeFile(data, "utf8");
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => {});
    await unlink(temp).catch(() => {});
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
}

/**
 * `writeFileAtomic`, synchronously, into an existing folder; `temp` names the temp file when the
 * caller must recognise its own leftovers (default `atomicTempPath`); `flush: false` skips the
 * fsync (for files that are only a cache, checked when read). Throws.
 */
export function writeFileAtomicSync(file: string, data: string | Buffer, options: { mode?: number; temp?: string; flush?: boolean } = {}): void {
  const temp = options.temp ?? atomicTempPath(file);
  try {
    const fd = openSync(temp, "wx", options.mode ?? 0o644);
    try {
      writeSync(fd, typeof data === "string" ? Buffer.from(data, "utf8") : data);
      if (options.flush !== false) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {
      // nothing was written
    }
    throw error;
  }
}
