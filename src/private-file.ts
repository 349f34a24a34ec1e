/**
 * Writing files that hold a conversation (`--session`, `--record`). Rules: the write is atomic
 * (atomic-write.ts); a new file gets mode 0600 (owner only: conversations may hold private
 * data); an existing file keeps its permission bits exactly, whatever the umask.
 */
import { stat } from "node:fs/promises";
import { writeFileAtomic } from "./atomic-write.js";

const PRIVATE_FILE_MODE = 0o600;

export async function writePrivateFileAtomic(file: string, data: string): Promise<void> {
  const mode = (await existingMode(file)) ?? PRIVATE_FILE_MODE;
  await writeFileAtomic(file, data, { exactMode: mode });
}

/** The permission bits of `file`, or undefined when it does not exist. */
async function existingMode(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}
