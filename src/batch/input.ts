/**
 * The input of `yiem batch` (docs/batch.md, "Inputs"): each line (read streamed by ./lines.ts)
 * parsed on its own, so a file of any size is never held in memory.
 *
 * Rules:
 * - Lines split at `\n` (a `\r` before it is dropped); blank lines are no items, but count for
 *   line numbers. A line longer than MAX_LINE_BYTES is a bad line (it is skipped, not held).
 * - A line starting with `{` is a JSON object: `{"id", "prompt"?, "stdin"?, "attachments"?,
 *   "vars"?}`, or an OpenAI batch-request line `{"custom_id", "method"?, "url"?, "body":
 *   {"messages": […], …}}` (only `body.messages` is read: the spec chooses model and settings).
 *   An unknown key is an error naming it (a typo must not silently drop a prompt).
 * - A line starting with `"` is a JSON string: the prompt. Any other line is the prompt as plain
 *   text. Both take their 1-based line number as id.
 * - `id` (or `custom_id`) is a non-empty string of at most MAX_ID_CHARS characters; an integer is
 *   taken as its decimal text. `line:N` (N digits) is the id of a bad line's result, so an item
 *   may not have it (`idOfText`, which reads the id alone, takes it: the item is refused when
 *   its line is parsed whole).
 * - Every problem is an InputLineError naming the line.
 */
import type { BatchItem } from "./types.js";
import { MAX_LINE_BYTES, type InputLine } from "./lines.js";

export const MAX_ID_CHARS = 512;

/** A bad input line: the message names the line (and the id when it is known). */
export class InputLineError extends Error {
  override readonly name = "InputLineError";
  constructor(readonly line: number, readonly reason: string, readonly id?: string) {
    super(`line ${line}${id !== undefined ? ` (id ${JSON.stringify(id)})` : ""}: ${reason}`);
  }
}

/** The item of one line; null for a blank line. Throws InputLineError. */
export function parseItem(input: InputLine): BatchItem | null {
  const { line } = input;
  if ("tooLong" in input) throw new InputLineError(line, `the line is ${input.tooLong} bytes long, more than the ${MAX_LINE_BYTES} (16 MiB) a line may have`);
  const text = input.text;
  const first = text.trimStart()[0];
  if (first === undefined) return null;
  if (first === '"') {
    const value = parseJson(text, line);
    if (typeof value !== "string") throw new InputLineError(line, "a line starting with \" must be one JSON string (the prompt)");
    return { id: String(line), line, prompt: value };
  }
  if (first !== "{") return { id: String(line), line, prompt: text };
  const value = parseJson(text, line);
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new InputLineError(line, "a line starting with { must be one JSON object");
  const object = value as Record<string, unknown>;
  return "custom_id" in object ? openAiItem(object, line) : objectItem(object, line);
}

/**
 * The id `parseItem` gives the line `text`, reading no more than it needs: null for a blank line,
 * the line number for a string or plain line; for an object line the JSON is parsed and only the
 * id is checked (the check pass past its full part, ./line-id.ts). Throws InputLineError.
 */
export function idOfText(text: string, line: number): string | null {
  const first = text.trimStart()[0];
  if (first === undefined) return null;
  if (first !== "{") return String(line);
  const value = parseJson(text, line);
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new InputLineError(line, "a line starting with { must be one JSON object");
  return objectId(value as Record<string, unknown>, line);
}

/** An object line's id: `custom_id` when the line has one (a batch-request line), else `id`. */
function objectId(object: Record<string, unknown>, line: number): string {
  return "custom_id" in object ? idOf(object.custom_id, "custom_id", line) : idOf(object.id, "id", line);
}

const ITEM_KEYS = new Set(["id", "prompt", "stdin", "attachments", "vars"]);
const OPENAI_KEYS = new Set(["custom_id", "method", "url", "body"]);
const CHAT_URLS = new Set(["/v1/chat/completions", "/chat/completions"]);

/** The ids a bad line's result is recorded under (./runner.ts): an item may not take one, or its result and a bad line's could share an id. */
const BAD_LINE_ID = /^line:\d+$/;

/** An object line's id for its item: `objectId`, refused when it has a bad line's form. */
function itemId(object: Record<string, unknown>, line: number): string {
  const id = objectId(object, line);
  if (BAD_LINE_ID.test(id)) throw new InputLineError(line, `the id ${JSON.stringify(id)} has the form of a bad line's id in the results (line:N): use another`, id);
  return id;
}

function objectItem(object: Record<string, unknown>, line: number): BatchItem {
  const id = itemId(object, line);
  const fail = (reason: string) => new InputLineError(line, reason, id);
  for (const key of Object.keys(object)) {
    if (!ITEM_KEYS.has(key)) throw fail(`unknown key ${JSON.stringify(key)} (an item has id, prompt, stdin, attachments, vars)`);
  }
  const item: BatchItem = { id, line };
  if (object.prompt !== undefined) {
    if (typeof object.prompt !== "string") throw fail('"prompt" must be a string');
    item.prompt = object.prompt;
  }
  if (object.stdin !== undefined) {
    if (typeof object.stdin !== "string") throw fail('"stdin" must be a string');
    item.stdin = object.stdin;
  }
  if (object.attachments !== undefined) {
    const list = object.attachments;
    if (!Array.isArray(list) || list.some((name) => typeof name !== "string" || name === "")) throw fail('"attachments" must be an array of file names');
    if (list.includes("-")) throw fail('"attachments" cannot name - (stdin): give the text as "stdin"');
    item.attachments = list as string[];
  }
  if (object.vars !== undefined) {
    const vars = object.vars;
    if (vars === null || typeof vars !== "object" || Array.isArray(vars)) throw fail('"vars" must be an object');
    item.vars = vars as Record<string, unknown>;
  }
  return item;
}

function openAiItem(object: Record<string, unknown>, line: number): BatchItem {
  const id = itemId(object, line);
  const fail = (reason: string) => new InputLineError(line, reason, id);
  for (const key of Object.keys(object)) {
    if (!OPENAI_KEYS.has(key)) throw fail(`unknown key ${JSON.stringify(key)} (a batch-request line has custom_id, method, url, body)`);
  }
  if (object.method !== undefined && object.method !== "POST") throw fail(`"method" must be "POST" (got ${JSON.stringify(object.method)})`);
  if (object.url !== undefined && !CHAT_URLS.has(String(object.url))) throw fail(`"url" must be /v1/chat/completions (got ${JSON.stringify(object.url)})`);
  const body = object.body as { messages?: unknown } | undefined;
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw fail('"body" must be an object with "messages"');
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw fail('"body.messages" must be a non-empty array of messages');
  return { id, line, messages: body.messages };
}

function idOf(value: unknown, key: string, line: number): string {
  if (value === undefined) throw new InputLineError(line, `an object line needs "${key}"`);
  const id = typeof value === "string" ? value : Number.isSafeInteger(value) ? String(value) : undefined;
  if (id === undefined) throw new InputLineError(line, `"${key}" must be a string (got ${JSON.stringify(value)})`);
  if (id === "") throw new InputLineError(line, `"${key}" must not be empty`);
  if (id.length > MAX_ID_CHARS) throw new InputLineError(line, `"${key}" is ${id.length} characters long, more than the ${MAX_ID_CHARS} an id may have`);
  return id;
}

function parseJson(text: string, line: number): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputLineError(line, `not valid JSON (${(error as Error).message})`);
  }
}
