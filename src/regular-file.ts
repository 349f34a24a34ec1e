/**
 * Reading a file a user or a spec named (also the spec search and cache entries, through
 * `readRegularFileSync`), refusing anything but a regular file. Rules:
 * - the file is opened non-blocking and checked with fstat before any read, so a FIFO is never
 *   waited on and a device (`/dev/zero`, also through a link) is never read;
 * - a folder, FIFO, socket or device is reported by what it is (`fileKind`), for messages like
 *   "… is not a regular file (a FIFO)";
 * - a socket cannot even be opened (ENXIO): `readRegularText` reports it as "a socket" too;
 * - other open errors (ENOENT, EACCES, …) are thrown as they are, for the caller to word.
 */
import { close, closeSync, constants, fstat, fstatSync, open, openSync, readFile, readFileSync, readSync, type Stats } from "node:fs";

const OPEN_NON_BLOCKING = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** What a non-regular file is, for messages. */
export function fileKind(stats: Stats): string {
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  if (stats.isDirectory()) return "a folder";
  return "not a file";
}

/**
 * The text of `file` when it is a regular file; else what it is instead (rules above). Through
 * node:fs's callbacks, not node:fs/promises: that module loads ~20 more of Node's (readline, the
 * file watchers, web streams) into every run that reads a replay or session file.
 */
export async function readRegularText(file: string): Promise<{ text: string } | { kind: string }> {
  let fd: number;
  try {
    fd = await new Promise<number>((resolve, reject) => open(file, OPEN_NON_BLOCKING, (error, opened) => (error ? reject(error) : resolve(opened))));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENXIO") return { kind: "a socket" };
    throw error;
  }
  try {
    const stats = await new Promise<Stats>((resolve, reject) => fstat(fd, (error, found) => (error ? reject(error) : resolve(found))));
    if (!stats.isFile()) return { kind: fileKind(stats) };
    return { text: await new Promise<string>((resolve, reject) => readFile(fd, "utf8", (error, text) => (error ? reject(error) : resolve(text)))) };
  } finally {
    await new Promise<void>((resolve) => close(fd, () => resolve()));
  }
}

/**
 * The text of a file a flag or spec named, or `fail(reason)` thrown with what went wrong, worded
 * for "<what the file is> <reason>": `not found`, `is a folder`, `is not a regular file (a FIFO)`,
 * `cannot be read (EACCES)`.
 */
export async function readNamedText(file: string, fail: (reason: string) => Error): Promise<string> {
  let read: { text: string } | { kind: string };
  try {
    read = await readRegularText(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw fail(code === "ENOENT" ? "not found" : code === "EISDIR" ? "is a folder" : `cannot be read (${code ?? (error as Error).message})`);
  }
  if ("kind" in read) throw fail(read.kind === "a folder" ? "is a folder" : `is not a regular file (${read.kind})`);
  return read.text;
}

/**
 * `readRegularText` without waiting (for start-up paths that read many small files): the bytes
 * of `file` when it is a regular file, else what it is instead, each with the file's stats.
 * `check` sees a regular file's stats before any byte is read; it may throw to refuse the file.
 * With `reuse` large enough for the file, the bytes are read into it (they are then a view of it);
 * with `reuse`, only as many bytes as fstat gave are read (cache entries: one cut short fails its
 * check), where readFileSync reads to the end.
 */
export function readRegularFileSync(
  file: string,
  check?: (stats: Stats) => void,
  reuse?: Buffer,
): { bytes: Buffer; stats: Stats } | { kind: string; stats: Stats } {
  const fd = openSync(file, OPEN_NON_BLOCKING);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { kind: fileKind(stats), stats };
    check?.(stats);
    return { bytes: reuse === undefined ? readFileSync(fd) : readWhole(fd, stats.size, reuse), stats };
  } finally {
    closeSync(fd);
  }
}

/**
 * The first `size` bytes of the open file `fd` (fewer when it ends sooner), read into `reuse` when
 * it is large enough, else into a new buffer (not zero-filled: every byte returned is read).
 */
export function readWhole(fd: number, size: number, reuse?: Buffer): Buffer {
  const buffer = reuse !== undefined && reuse.length >= size ? reuse : Buffer.allocUnsafeSlow(size);
  let length = 0;
  while (length < size) {
    const read = readSync(fd, buffer, length, size - length, null);
    if (read === 0) break;
    length += read;
  }
  return buffer.subarray(0, length);
}
