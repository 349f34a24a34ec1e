/**
 * Reading a file a user or a spec named, refusing anything but a regular file. Rules:
 * - the file is opened non-blocking and checked with fstat before any read, so a FIFO is never
 *   waited on and a device (`/dev/zero`, also through a link) is never read;
 * - a folder, FIFO, socket or device is reported by what it is (`fileKind`), for messages like
 *   "… is not a regular file (a FIFO)";
 * - open errors (ENOENT, EACCES, …) are thrown as they are, for the caller to word.
 */
import { constants, type Stats } from "node:fs";
import { open } from "node:fs/promises";

/** What a non-regular file is, for messages. */
export function fileKind(stats: Stats): string {
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  if (stats.isDirectory()) return "a folder";
  return "not a file";
}

/** The text of `file` when it is a regular file; else what it is instead (rules above). */
export async function readRegularText(file: string): Promise<{ text: string } | { kind: string }> {
  const handle = await open(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { kind: fileKind(stats) };
    return { text: await handle.readFile("utf8") };
  } finally {
    await handle.close();
  }
}
