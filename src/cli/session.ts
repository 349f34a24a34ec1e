/**
 * `--session FILE`: the conversation (without the system prompt) kept as JSON between runs.
 * A missing file starts a new session; the file is written atomically after each run, mode 0600
 * when new (an existing file keeps its mode: see private-file.ts). Only a regular file is read: a
 * FIFO, socket or device there is refused at once (opened non-blocking, checked with fstat), never
 * waited on.
 */
import { readRegularText } from "../regular-file.js";
import type { ChatMessage } from "../provider/types.js";
import { writePrivateFileAtomic } from "../private-file.js";
import { UsageError } from "./errors.js";

interface SessionFile {
  version: 1;
  messages: ChatMessage[];
}

export async function loadSession(file: string): Promise<ChatMessage[]> {
  let read: { text: string } | { kind: string };
  try {
    read = await readRegularText(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new UsageError(`cannot read session file ${file}: ${(error as Error).message}`);
  }
  if ("kind" in read) throw new UsageError(`session file ${file} is not a regular file (${read.kind})`);
  const text = read.text;
  let parsed: SessionFile;
  try {
    parsed = JSON.parse(text) as SessionFile;
  } catch (error) {
    throw new UsageError(`session file ${file} is not JSON: ${(error as Error).message}`);
  }
  if (parsed?.version !== 1 || !Array.isArray(parsed.messages)) throw new UsageError(`session file ${file} is not a yiem session (version 1)`);
  return parsed.messages.filter((m) => m.role !== "system");
}

export async function saveSession(file: string, messages: ChatMessage[]): Promise<void> {
  const data: SessionFile = { version: 1, messages: messages.filter((m) => m.role !== "system") };
  await writePrivateFileAtomic(file, `${JSON.stringify(data, null, 2)}\n`);
}
