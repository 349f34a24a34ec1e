/**
 * One item of `yiem batch` (./batch.ts) as a full agent run: its messages (the prompt or the
 * template, its stdin, its attachments; or a batch-request line's messages), then `runAgent`
 * on the batch's one registry, hooks and tool policy, with its own provider, runId and events.
 *
 * Rules (docs/batch.md, "Inputs"):
 * - The prompt is the item's `prompt`, or `--prompt-template` filled from its vars
 *   (../../batch/template.ts); `stdin` is appended to it as context, as piped stdin is for
 *   `yiem run` (../stdin.ts composePrompt); then the spec's and `--attach`'s attachments, then
 *   the item's own (relative to the current folder, and inside it; each a regular file).
 * - A batch-request line's messages follow the spec's system prompt, unless they bring a system
 *   message of their own; a template does not apply to them; they must hold a user message, and
 *   may not call a tool the spec refuses.
 * - `prepare` checks all of that but the files, before anything runs; the files are read when
 *   the item runs (a missing one is that item's error). The spec's and `--attach`'s files are
 *   read once per batch, by the first item that runs (`sharedFile`): every item attaches the same
 *   bytes, even when a file changes while the batch runs, and 10,000 items do not read it 10,000
 *   times.
 * - A run never throws here: any failure is an `error` result naming it, secrets redacted.
 */
import { randomUuid } from "../../random-id.js";
import { Readable } from "node:stream";
import { isAbsolute, relative, resolve } from "node:path";
import { readFile, realpath, stat } from "node:fs/promises";
import type { ResolvedSpec } from "../../config/types.js";
import type { AgentHooks, AgentEvent, RunResult } from "../../loop/types.js";
import type { ToolRegistry } from "../../tools/registry.js";
import type { ChatMessage } from "../../provider/types.js";
import type { Provider } from "../../provider/types.js";
import type { Redactor } from "../../redact.js";
import type { BatchItem, BatchResult } from "../../batch/types.js";
import { statusOf } from "../../batch/types.js";
import { fillTemplate } from "../../batch/template.js";
import { messageOf } from "../../error-text.js";
import type { CliInput } from "../io.js";
import { fileKind } from "../../regular-file.js";
import { zeroUsage } from "../../tools/usage.js";
import { toMessage } from "../messages-input.js";
import { deniedCallProblem } from "../session.js";
import { composePrompt } from "../stdin.js";
import { attachToPrompt, readAttachments } from "../attachments.js";

/** What every item of a batch shares. */

/** A batch never attaches stdin (`-` is refused in its flags and input lines): an input that is already at its end. */
const NO_STDIN: CliInput = Readable.from([]);
export interface BatchRunShared {
  spec: ResolvedSpec;
  registry: ToolRegistry;
  hooks: AgentHooks;
  isToolAllowed: (name: string) => boolean;
  /** `--prompt-template`, read. */
  template?: string;
  cwd: string;
  redact: Redactor;
  /** A new provider for one item (each item keeps its own provider state). */
  newProvider(): Promise<Provider>;
  runAgent: typeof import("../../loop/run-agent.js").runAgent;
  yiemVersion: string;
  baseURL?: string;
  /** Receives each item's events (already priced), tagged with the item's id; absent: none are kept. */
  onItemEvent?: (event: AgentEvent, itemId: string) => void;
}

/** The messages of `item` before its files are attached; throws an Error saying what is wrong. */
export function itemMessages(item: BatchItem, shared: Pick<BatchRunShared, "spec" | "template" | "isToolAllowed">): ChatMessage[] {
  const system: ChatMessage[] = shared.spec.systemPrompt ? [{ role: "system", content: shared.spec.systemPrompt }] : [];
  if (item.messages) {
    if (shared.template !== undefined) throw new Error("--prompt-template fills prompts; a batch-request line (custom_id) brings its own messages");
    const messages = item.messages.map((value, at) => toMessage(value, `body.messages[${at}]`));
    messages.forEach((message, at) => {
      const problem = deniedCallProblem(message, shared.isToolAllowed);
      if (problem) throw new Error(`body.messages[${at}] ${problem}`);
    });
    if (!messages.some((m) => m.role === "user")) throw new Error("body.messages has no user message");
    return messages.some((m) => m.role === "system") ? messages : [...system, ...messages];
  }
  const prompt = shared.template !== undefined
    ? fillTemplate(shared.template, { prompt: item.prompt ?? "", id: item.id, ...item.vars })
    : item.prompt;
  if (prompt === undefined) throw new Error('no prompt: the item has no "prompt" and no --prompt-template is given');
  const text = composePrompt([prompt], item.stdin ?? null);
  if (text.trim() === "") throw new Error("the prompt is empty");
  return [...system, { role: "user", content: text }];
}

/** The bytes of the spec's attachments by path, read once per batch (module rules). */
const sharedFiles = new WeakMap<BatchRunShared, Map<string, Promise<Buffer>>>();

/** `path`'s bytes: read once per batch when it is one of the spec's attachments, else now. */
function sharedFile(shared: BatchRunShared, path: string): Promise<Buffer> {
  if (!shared.spec.attachments.some((attachment) => attachment.path === path)) return readFile(path);
  let files = sharedFiles.get(shared);
  if (!files) sharedFiles.set(shared, (files = new Map()));
  let bytes = files.get(path);
  if (!bytes) files.set(path, (bytes = readFile(path)));
  return bytes;
}

/** Runs one item (see module rules); never rejects. */
export async function runBatchItem(item: BatchItem, shared: BatchRunShared, signal: AbortSignal): Promise<BatchResult> {
  const runId = randomUuid();
  const startedAt = performance.now();
  try {
    const files = [...shared.spec.attachments, ...(await itemFiles(item, shared.cwd))];
    const messages = attachToPrompt(itemMessages(item, shared), await readAttachments(files, () => NO_STDIN, signal, (path) => sharedFile(shared, path)));
    const provider = await shared.newProvider();
    const onItemEvent = shared.onItemEvent;
    const result = await shared.runAgent({
      provider,
      registry: shared.registry,
      messages,
      toolExecution: shared.spec.toolExecution,
      limits: shared.spec.limits,
      hooks: shared.hooks,
      isToolAllowed: shared.isToolAllowed,
      signal,
      runId,
      ...(onItemEvent ? { onEvent: (event: AgentEvent) => onItemEvent(event, item.id) } : {}),
      ...(shared.spec.model.pricing ? { pricing: shared.spec.model.pricing } : {}),
      ...(shared.spec.output ? { output: shared.spec.output } : {}),
      framing: {
        configPath: shared.spec.configPath,
        yiemVersion: shared.yiemVersion,
        startedAt,
        ...(shared.baseURL ? { baseURL: shared.baseURL } : {}),
      },
    });
    return resultOf(item, result, shared.redact);
  } catch (error) {
    return {
      id: item.id,
      runId,
      status: signal.aborted ? "aborted" : "error",
      stopReason: signal.aborted ? "aborted" : "error",
      text: "",
      usage: zeroUsage(),
      durationMs: Math.round(performance.now() - startedAt),
      error: shared.redact(messageOf(error)),
    };
  }
}

/**
 * The item's own attachments, resolved against `cwd`: each must be a regular file inside `cwd`
 * (its real path, symbolic links followed), since an input line may come from untrusted data
 * and must not send `~/.ssh/id_rsa` or `../secrets.env` to the model.
 */
async function itemFiles(item: BatchItem, cwd: string): Promise<Array<{ path: string; name: string }>> {
  const files: Array<{ path: string; name: string }> = [];
  const root = await realpath(cwd);
  for (const name of item.attachments ?? []) {
    const path = await realpath(resolve(cwd, name)).catch((error: NodeJS.ErrnoException) => {
      throw new Error(`attachment "${name}" ${error.code === "ENOENT" ? "not found" : `cannot be read (${error.code ?? error.message})`} (${resolve(cwd, name)})`);
    });
    const inside = relative(root, path);
    if (inside === "" || inside.startsWith("..") || isAbsolute(inside)) throw new Error(`attachment "${name}" is outside the current folder (${root}): an item may attach only files under it`);
    const stats = await stat(path);
    if (!stats.isFile()) throw new Error(`attachment "${name}" is not a regular file (${fileKind(stats)})`);
    files.push({ path, name });
  }
  return files;
}

/** The result line of a finished run. */
export function resultOf(item: BatchItem, result: RunResult, redact: Redactor): BatchResult {
  const { costUsd, ...usage } = result.usage;
  return {
    id: item.id,
    runId: result.runId,
    status: statusOf(result.stopReason),
    stopReason: result.stopReason,
    text: redact(result.text),
    ...("structured" in result ? { structured: redact(result.structured) } : {}),
    usage,
    ...(costUsd !== undefined ? { costUsd } : {}),
    durationMs: result.durationMs,
    ...(result.error !== undefined ? { error: redact(result.error) } : {}),
  };
}
