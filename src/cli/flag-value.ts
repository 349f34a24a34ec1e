/** Flag values given inline, as `@FILE`, or as `-` (stdin): one reader for every flag that takes them. */
import { resolve } from "node:path";
import { UsageError } from "../errors.js";
import { readNamedText } from "../regular-file.js";
import type { CliIo } from "./io.js";

/**
 * A flag value that is inline text, `@file` (read relative to the current folder), or `-` (all
 * of stdin, when `allowStdin`); the folder and stdin are the call's (../io.ts). The file must be a
 * regular file: a FIFO is never waited on, and a missing file or a folder is a usage error that
 * names the flag, the file as given and (when that was relative) its full path.
 */
export async function readFlagValue(flag: string, value: string, io: Pick<CliIo, "cwd" | "stdin">, options: { allowStdin?: boolean } = {}): Promise<string> {
  if (value === "-" && options.allowStdin) return readAllStdin(io.stdin);
  if (value.startsWith("@")) {
    const file = value.slice(1);
    if (file === "") throw new UsageError(`--${flag} @FILE: name a file after "@"`);
    const path = resolve(io.cwd, file);
    const where = path === file ? "" : ` (${path})`;
    return readNamedText(path, (reason) => new UsageError(`--${flag}: file "${file}" ${reason}${where}`));
  }
  return value;
}

async function readAllStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}
