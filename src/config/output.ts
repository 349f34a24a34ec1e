/**
 * Resolving the spec keys that shape a run's result: `output` (with `--output-schema`) and
 * `attachments` (with `-a/--attach`). Rules (docs/spec.md):
 * - `--output-schema` replaces `output.schema`: text starting with `{` is the schema as JSON,
 *   anything else a file (relative to cwd; a spec's file is relative to the spec's folder);
 * - the schema must be a JSON object that ajv compiles (the very ajv that checks tool arguments,
 *   tools/validate.ts), so a bad schema is exit 2 before any model call;
 * - an attachment must be a regular file within ATTACHMENT_LIMITS and a text file or an image
 *   (`attachmentKind`), all checked here with the spec's other problems, so a binary file is
 *   reported before the API key is asked for; cli/attachments.ts reads the bytes for the run;
 *   `-` (from `--attach` only) is stdin, checked when it is read.
 */
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { readNamedText, fileKind } from "../regular-file.js";
import { ConfigError } from "./errors.js";
import type { SpecPath } from "../interpolate.js";
import type { SpecProblems } from "./problems.js";
import type { AgentSpec, ResolvedAttachment, ResolvedOutput, SpecOverrides } from "./types.js";
import type { JsonSchema } from "../tools/types.js";

/** Size caps of attachments (docs/cli.md, "Attachments"). */
export const ATTACHMENT_LIMITS = {
  /** One file, bytes (images included). */
  perFileBytes: 5 * 1024 * 1024,
  /** All attachments of a run together, bytes. */
  totalBytes: 20 * 1024 * 1024,
} as const;

type SpecErrorFn = (message: string, specPath: SpecPath) => ConfigError;

export interface OutputContext {
  spec: AgentSpec;
  overrides: SpecOverrides;
  cwd: string;
  baseDir: string;
  specError: SpecErrorFn;
  problems: SpecProblems;
}

/** The resolved `output`, or null when no schema is set; a problem is added and null returned. */
export async function resolveOutput(ctx: OutputContext): Promise<ResolvedOutput | null> {
  const { spec, overrides, problems } = ctx;
  const fromFlag = overrides.outputSchema !== undefined;
  if (!fromFlag && spec.output === undefined) return null;
  const fail = (message: string): ConfigError =>
    fromFlag ? new ConfigError(`--output-schema: ${message}`, { key: "--output-schema" }) : ctx.specError(message, ["output", "schema"]);
  const schema = await problems.check(async () => {
    const raw = fromFlag ? overrides.outputSchema! : spec.output!.schema;
    if (typeof raw !== "string") return raw;
    if (raw.trim().startsWith("{")) return parseSchema(raw, "the schema", fail);
    const file = path.resolve(fromFlag ? ctx.cwd : ctx.baseDir, raw);
    const text = await readNamedText(file, (reason) => fail(`schema file "${raw}" ${reason} (${file})`));
    return parseSchema(text, `schema file "${raw}"`, fail);
  });
  if (schema === undefined) return null;
  const { inputSchemaProblem } = await import("../tools/validate.js");
  const problem = await inputSchemaProblem(schema);
  if (problem !== null) {
    problems.add(fail(`not a JSON Schema ajv can use: ${problem}`));
    return null;
  }
  return {
    schema,
    mode: spec.output?.mode ?? "tool",
    retries: spec.output?.retries ?? 2,
    from: fromFlag ? "--output-schema" : "output.schema",
  };
}

function parseSchema(text: string, what: string, fail: (message: string) => ConfigError): JsonSchema {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw fail(`${what} is not valid JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw fail(`${what} must be a JSON object (a JSON Schema)`);
  return value as JsonSchema;
}

/** The spec's attachments (relative to its folder), then `--attach`'s (relative to cwd); each checked to exist within the caps. */
export async function resolveAttachments(ctx: OutputContext): Promise<ResolvedAttachment[]> {
  const out: ResolvedAttachment[] = [];
  const given: Array<{ name: string; file: string; fail: (message: string) => ConfigError }> = [];
  for (const [index, name] of (ctx.spec.attachments ?? []).entries()) {
    given.push({ name, file: path.resolve(ctx.baseDir, name), fail: (m) => ctx.specError(m, ["attachments", index]) });
  }
  for (const name of ctx.overrides.attachments ?? []) {
    if (name === "-") {
      out.push({ path: "-", name: "stdin" });
      continue;
    }
    given.push({ name, file: path.resolve(ctx.cwd, name), fail: (m) => new ConfigError(`--attach: ${m}`, { key: "--attach" }) });
  }
  let total = 0;
  for (const item of given) {
    const checked = await ctx.problems.check(async () => {
      const stats = await stat(item.file).catch((error: NodeJS.ErrnoException) => {
        throw item.fail(`file "${item.name}" ${error.code === "ENOENT" ? "not found" : `cannot be read (${error.code ?? error.message})`} (${item.file})`);
      });
      if (!stats.isFile()) throw item.fail(`"${item.name}" is not a regular file (${fileKind(stats)})`);
      if (stats.size > ATTACHMENT_LIMITS.perFileBytes) {
        throw item.fail(`file "${item.name}" is ${formatBytes(stats.size)}, more than the ${formatBytes(ATTACHMENT_LIMITS.perFileBytes)} an attachment may have`);
      }
      total += stats.size;
      const problem = attachmentProblem(await readFile(item.file));
      if (problem) throw item.fail(`file "${item.name}" ${problem}`);
      return true;
    });
    if (checked) out.push({ path: item.file, name: item.name });
  }
  if (total > ATTACHMENT_LIMITS.totalBytes) {
    ctx.problems.add(new ConfigError(`the attachments are ${formatBytes(total)} together, more than the ${formatBytes(ATTACHMENT_LIMITS.totalBytes)} a run may attach`, { key: "--attach" }));
  }
  return out;
}

/** The image MIME type of `bytes` by its signature (PNG, JPEG, GIF, WebP), else "text" for UTF-8 without NUL bytes, else undefined (a binary file). */
export function attachmentKind(bytes: Buffer): string | undefined {
  const starts = (...sig: number[]) => sig.every((b, i) => bytes[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (bytes.subarray(0, 6).toString("latin1") === "GIF87a" || bytes.subarray(0, 6).toString("latin1") === "GIF89a") return "image/gif";
  if (bytes.subarray(0, 4).toString("latin1") === "RIFF" && bytes.subarray(8, 12).toString("latin1") === "WEBP") return "image/webp";
  if (bytes.includes(0)) return undefined;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return "text";
  } catch {
    return undefined;
  }
}

/** Why `bytes` cannot be attached, worded to follow the attachment's name; undefined when they can. */
export function attachmentProblem(bytes: Buffer): string | undefined {
  if (attachmentKind(bytes) !== undefined) return undefined;
  return "is a binary file and not a png, jpeg, gif or webp image: only UTF-8 text files and those images can be attached";
}

/** Bytes for messages: "5 MiB", "1.2 KiB", "300 bytes". */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Number((bytes / 1024 / 1024).toFixed(1))} MiB`;
  if (bytes >= 1024) return `${Number((bytes / 1024).toFixed(1))} KiB`;
  return `${bytes} bytes`;
}
