/**
 * Attachments (`-a/--attach PATH`, spec `attachments:`): files added to the prompt's user message.
 * Rules (docs/cli.md, "Attachments"):
 * - the kind comes from the bytes, never the name: PNG, JPEG, GIF and WebP signatures are images
 *   (sent as image parts, base64); anything else is text when it is UTF-8 without NUL bytes (a
 *   fenced block titled with the name as given, the fence longer than any backtick run inside);
 *   any other binary file is refused by name, exit 2, before any model call;
 * - `-` reads stdin (to its end) as one attachment, named `stdin`; stdin then holds no prompt;
 * - the caps (config/output.ts ATTACHMENT_LIMITS) hold for stdin too;
 * - the blocks and images join the last user message (the new prompt), so `--session`, stored
 *   sessions and `--record` keep them with the conversation.
 */
import { readFile } from "node:fs/promises";
import { ATTACHMENT_LIMITS, attachmentKind, attachmentProblem, formatBytes } from "../config/output.js";
import type { ResolvedAttachment, ResolvedSpec } from "../config/types.js";
import type { ChatMessage, UserMessage } from "../provider/types.js";
import type { ImageContent } from "../tools/types.js";
import { UsageError } from "../errors.js";
import type { CliInput } from "./io.js";

export type LoadedAttachment =
  | { kind: "text"; name: string; text: string }
  | { kind: "image"; name: string; image: ImageContent };

/**
 * Reads and classifies every attachment (see module rules), `-` from the call's stdin (`stdin()`,
 * asked for only then: building process.stdin costs a start Node's file streams), a file through
 * `read` (default: read it now); throws a UsageError naming the file at fault.
 */
export async function readAttachments(
  list: ResolvedAttachment[],
  stdin: () => CliInput,
  signal?: AbortSignal,
  // A wrapper, not `readFile` itself: the default is evaluated on every call, and naming
  // readFile would load node:fs/promises (~20 internal modules) for a run with no attachments.
  read: (path: string) => Promise<Buffer> = (path) => readFile(path),
): Promise<LoadedAttachment[]> {
  const loaded: LoadedAttachment[] = [];
  let total = 0;
  for (const item of list) {
    const bytes = item.path === "-" ? await readStdinBytes(stdin(), signal) : await read(item.path);
    total += bytes.length;
    if (total > ATTACHMENT_LIMITS.totalBytes) {
      throw new UsageError(`the attachments are more than the ${formatBytes(ATTACHMENT_LIMITS.totalBytes)} a run may attach (at "${item.name}")`);
    }
    loaded.push(classify(item.name, bytes));
  }
  return loaded;
}

/** An attachment's kind from its bytes (see module rules; the rule's home is config/output.ts). */
export function classify(name: string, bytes: Buffer): LoadedAttachment {
  const kind = attachmentKind(bytes);
  if (kind === undefined) throw new UsageError(`attachment "${name}" ${attachmentProblem(bytes)}`);
  if (kind === "text") return { kind: "text", name, text: bytes.toString("utf8") };
  return { kind: "image", name, image: { type: "image", mimeType: kind, data: bytes.toString("base64") } };
}

/** One text attachment as the prompt shows it: its name, then a fence longer than any run of backticks inside. */
export function textBlock(name: string, text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `Attachment: ${name}\n${fence}\n${text.endsWith("\n") ? text : `${text}\n`}${fence}`;
}

/** Adds the attachments to the last user message of `messages` (a new message object: earlier ones stay shared). */
export function attachToPrompt(messages: ChatMessage[], attachments: LoadedAttachment[]): ChatMessage[] {
  if (attachments.length === 0) return messages;
  const at = messages.findLastIndex((m) => m.role === "user");
  if (at < 0) throw new UsageError("attachments need a prompt to go with");
  const user = messages[at] as UserMessage;
  const blocks = attachments.flatMap((a) => (a.kind === "text" ? [textBlock(a.name, a.text)] : []));
  const images = attachments.flatMap((a) => (a.kind === "image" ? [a.image] : []));
  const names = attachments.flatMap((a) => (a.kind === "image" ? [a.name] : []));
  const parts = [user.content, ...blocks];
  if (names.length > 0) parts.push(`Attached image${names.length > 1 ? "s" : ""}, in order: ${names.join(", ")}`);
  const next: UserMessage = { role: "user", content: parts.join("\n\n") };
  const allImages = [...(user.images ?? []), ...images];
  if (allImages.length > 0) next.images = allImages;
  return messages.map((m, i) => (i === at ? next : m));
}

/** All of `stdin` (the call's, never the process's own) as bytes, refused past the per-file cap. */
async function readStdinBytes(stdin: CliInput, signal?: AbortSignal): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve, reject) => {
    const onAbort = () => finish(new UsageError("stdin was not read to its end: the run was stopped"));
    const finish = (error?: Error) => {
      stdin.off("data", onData).off("end", onEnd).off("error", finish);
      signal?.removeEventListener("abort", onAbort);
      stdin.pause();
      if (error) reject(error);
      else resolve();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > ATTACHMENT_LIMITS.perFileBytes) {
        finish(new UsageError(`attachment "stdin" is more than the ${formatBytes(ATTACHMENT_LIMITS.perFileBytes)} an attachment may have`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish();
    signal?.addEventListener("abort", onAbort, { once: true });
    stdin.on("data", onData).once("end", onEnd).once("error", finish);
    stdin.resume();
  });
  return Buffer.concat(chunks);
}

/**
 * The prompt input when an attachment is `-`: stdin is that attachment, never the prompt (the
 * prompt word `-` and `--input-format ndjson` then clash with it: a usage error).
 */
export function withStdinAttachment<T extends { stdinAt?: number; stdinMode: "auto" | "wait" | "never" }>(input: T, spec: ResolvedSpec, argv: Record<string, unknown>): T {
  if (!spec.attachments.some((a) => a.path === "-")) return input;
  if (input.stdinAt !== undefined) throw new UsageError("--attach - and the prompt word - both read stdin: use one of them");
  if (argv["input-format"] === "ndjson") throw new UsageError("--attach - reads stdin as an attachment, but --input-format ndjson reads it as messages: drop one of them");
  if (argv.stdin === false) throw new UsageError("--attach - reads stdin, which --no-stdin turns off: drop one of them");
  return { ...input, stdinMode: "never" };
}
