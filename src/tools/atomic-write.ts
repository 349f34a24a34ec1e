/**
 * Atomic file writes: the data goes to a temp file in the same folder (named `.yiem-tmp-*`, which
 * the tool loader skips), is flushed, then renamed over the target. A crash leaves either the
 * old file or the new one, never half of one. The folder is created when missing. `mode` is
 * the mode a new file is opened with (the umask applies); `exactMode` is set exactly on the temp
 * file before the rename, whatever the umask.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

export async function writeFileAtomic(file: string, data: string, options: { mode?: number; exactMode?: number } = {}): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temp = join(dirname(file), `.yiem-tmp-${basename(file)}-${randomBytes(6).toString("hex")}`);
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
