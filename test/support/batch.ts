/**
 * Helpers for `yiem batch` tests: a project folder (a spec over the scripted server, an `echo`
 * tool), a server script that answers each item from its own prompt (so concurrency cannot mix
 * answers up), and readers for the results file.
 *
 * The script: a prompt holding `[tools:N]` makes the model call `echo` N times (one call per
 * turn) before it answers; the answer is `done: <the first user message>`.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { reply, type ChatReply, type ChatServer, type ReceivedRequest } from "./chat-server.js";

export const ECHO_TOOL = `export default {
  name: "echo",
  label: "Echo",
  description: "Echoes its text.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
  execute: async (_id, args) => ({ content: [{ type: "text", text: "echo " + args.text }] }),
};
`;

export function batchSpec(extra = ""): string {
  return `model:
  name: test-model
  baseURL: \${TEST_BASE_URL}
  apiKeyEnv: TEST_API_KEY
  maxRetries: 2
  timeoutMs: 10s
  stream: false
systemPrompt: You answer briefly.
toolDirs: [tools]
limits: { maxTurns: 6 }
${extra}`;
}

/** A test file's batch project and its current server. */
export interface BatchFixture {
  /** The project (batchProject()), made before the file's tests and removed after them. */
  dir: string;
  /** The test's scripted server, closed after each test. */
  server?: ChatServer;
}

/** Registers the hooks that make and remove a file's batch project and close each test's server. */
export function useBatchProject(): BatchFixture {
  const fixture = { dir: "" } as BatchFixture;
  beforeAll(async () => {
    fixture.dir = await batchProject();
  });
  afterAll(() => rm(fixture.dir, { recursive: true, force: true }));
  afterEach(async () => {
    await fixture.server?.close();
    fixture.server = undefined;
  });
  return fixture;
}

/** A temporary project: agent.config.yaml (batchSpec(extra)) and tools/echo.mjs. */
export async function batchProject(extra = ""): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "yiem-batch-"));
  await mkdir(join(dir, "tools"));
  await writeFile(join(dir, "tools", "echo.mjs"), ECHO_TOOL);
  await writeFile(join(dir, "agent.config.yaml"), batchSpec(extra));
  return dir;
}

/** The first user message's text of a request. */
export function promptOf(request: ReceivedRequest): string {
  const user = (request.body?.messages ?? []).find((m: { role: string }) => m.role === "user");
  const content = user?.content;
  return typeof content === "string" ? content : Array.isArray(content) ? content.map((p: { text?: string }) => p.text ?? "").join("") : "";
}

/** The reply for one request (see module doc). */
export function itemReply(request: ReceivedRequest): ChatReply {
  const prompt = promptOf(request);
  const wanted = Number(/\[tools:(\d+)\]/.exec(prompt)?.[1] ?? 0);
  const done = (request.body?.messages ?? []).filter((m: { role: string }) => m.role === "tool").length;
  if (done < wanted) {
    return reply.json({ toolCalls: [{ id: `call_${done + 1}`, name: "echo", arguments: JSON.stringify({ text: `step ${done + 1}` }) }], usage: { prompt_tokens: 10, completion_tokens: 2 } });
  }
  return reply.json({ content: `done: ${prompt}`, usage: { prompt_tokens: 10, completion_tokens: 3 } });
}

let validateResult: (((value: unknown) => boolean) & { errors?: unknown }) | undefined;

/** The results file's lines, parsed, each valid against schema/batch-result.schema.json (a torn last line throws). */
export async function readResults(file: string): Promise<Array<Record<string, any>>> {
  if (!validateResult) {
    const ajv = new Ajv({ allErrors: true, strict: false });
    validateResult = ajv.compile(JSON.parse(readFileSync(new URL("../../schema/batch-result.schema.json", import.meta.url), "utf8")));
  }
  const text = await readFile(file, "utf8");
  if (text !== "" && !text.endsWith("\n")) throw new Error(`${file}: the last line is torn`);
  return text.split("\n").filter((line) => line !== "").map((line) => {
    const value = JSON.parse(line);
    if (!validateResult!(value)) throw new Error(`result does not match the schema: ${line.slice(0, 300)}\n${JSON.stringify(validateResult!.errors).slice(0, 500)}`);
    return value;
  });
}

/** `n` object lines `{"id": "item-<i>", "prompt": "…"}`, each prompt unique. */
export function objectLines(n: number, tools = 0): string {
  return Array.from({ length: n }, (_, i) => JSON.stringify({ id: `item-${i}`, prompt: `question ${i}${tools ? ` [tools:${tools}]` : ""}` })).join("\n") + "\n";
}

let validate: (((value: unknown) => boolean) & { errors?: unknown }) | undefined;

/** Every event valid against schema/events.schema.json (batch events have no agentStart/agentEnd of their own). */
export function assertEventsValid(events: Array<Record<string, unknown>>): void {
  if (!validate) {
    const addFormats = addFormatsModule as unknown as (ajv: Ajv) => void;
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats(ajv);
    validate = ajv.compile(JSON.parse(readFileSync(new URL("../../schema/events.schema.json", import.meta.url), "utf8")));
  }
  for (const event of events) {
    if (!validate(event)) throw new Error(`event does not match the schema: ${JSON.stringify(event).slice(0, 400)}\n${JSON.stringify(validate.errors).slice(0, 800)}`);
  }
}

/** The batch's own events: gap-free seq from 1, batchStart first (when it started), one batchEnd last. */
export function assertBatchStream(events: Array<Record<string, unknown>>, options: { started?: boolean } = {}): void {
  assertEventsValid(events);
  events.forEach((e, i) => {
    if (e.seq !== i + 1) throw new Error(`batch event ${i} has seq ${String(e.seq)}`);
    if (e.runId !== events[0].runId) throw new Error("batch events with two runIds");
  });
  if ((options.started ?? true) && events[0]?.type !== "batchStart") throw new Error(`first batch event is ${String(events[0]?.type)}`);
  if (events.filter((e) => e.type === "batchEnd").length !== 1 || events.at(-1)?.type !== "batchEnd") throw new Error("expected one batchEnd, last");
}
