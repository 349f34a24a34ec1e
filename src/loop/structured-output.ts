/**
 * Structured output: the run's final answer as a JSON value valid against a schema (spec
 * `output`, `--output-schema`; docs/spec.md, "Structured output"). Rules:
 * - `tool` mode (default): a final-answer tool (FINAL_ANSWER_TOOL) is offered beside the run's
 *   tools, whatever the tool policy says; its parameters are the schema (an object schema as is,
 *   any other schema wrapped as the one property `value`). A call with valid arguments ends the
 *   run through the terminate path (after its batch); its arguments are validated like every
 *   tool call's (loop/prepare.ts, ajv with defaults and scalar coercion), and the value is the
 *   validated arguments. A call that fails validation is an error result with the errors, which
 *   the model sees. An answer in text instead of the tool is accepted when it is JSON valid
 *   against the schema; otherwise the model is asked once to call the tool, and every later text
 *   answer counts as an invalid answer.
 * - `native` mode: every request carries `response_format: json_schema` (`strict` only when the
 *   schema keeps OpenAI's strict rules, `strictSchemaProblem`); the text of an answer without tool
 *   calls is parsed (one surrounding ``` fence is allowed) and validated with the same ajv. A
 *   server that refuses the request gets its own words in the error and the hint to use `tool`.
 * - Each invalid answer goes back to the model with the validation errors; after `retries` of
 *   them (default 2) one more invalid answer ends the run: stopReason `outputInvalid`, the last
 *   invalid answer is the run's text and `structured` is null.
 */
import type { ChatMessage, ResponseFormat } from "../provider/types.js";
import { ModelError } from "../provider/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { JsonSchema, Tool, ToolSource } from "../tools/types.js";
import { textContent } from "../tools/define.js";
import { validateAgainstSchema } from "../tools/validate.js";
import { messageOf } from "../error-text.js";
import type { FinishedCall } from "./execute.js";
import type { OutputContract } from "./types.js";

export const FINAL_ANSWER_TOOL = "finalAnswer";
export const DEFAULT_OUTPUT_RETRIES = 2;

/** What the loop does with an answer: take it, send the model a message and go on, or end the run. */
export type OutputVerdict =
  | { kind: "accept"; value: unknown }
  | { kind: "retry"; message: ChatMessage }
  | { kind: "fail"; error: string };

/** One run's structured-output state (see module rules). */
export interface StructuredOutput {
  /** The registry with the final-answer tool (tool mode), else the run's own. */
  registry: ToolRegistry;
  isToolAllowed: (name: string) => boolean;
  /** Native mode: sent with every request. */
  responseFormat?: ResponseFormat;
  /** An answer without tool calls. */
  onAnswer(text: string): Promise<OutputVerdict>;
  /** After a batch of tool calls: null to go on as the loop would, or the end of the run. */
  afterBatch(finished: FinishedCall[]): OutputVerdict | null;
  /** The accepted value; undefined while there is none. */
  readonly value: unknown;
  /** Whether an answer was accepted (its value may be null). */
  readonly answered: boolean;
  /** The last invalid answer ("" when none). */
  readonly lastInvalid: string;
  /** A model failure's message, with the hint for a server that refuses response_format. */
  describeModelError(error: unknown): string;
}

export function createStructuredOutput(contract: OutputContract, registry: ToolRegistry, isToolAllowed: (name: string) => boolean): StructuredOutput {
  const mode = contract.mode ?? "tool";
  const retries = contract.retries ?? DEFAULT_OUTPUT_RETRIES;
  const schema = contract.schema;
  const wrapped = !isObjectSchema(schema);
  const toolSchema: JsonSchema = wrapped
    ? { type: "object", properties: { value: schema }, required: ["value"], additionalProperties: false }
    : schema;
  let accepted: { value: unknown } | undefined;
  let invalid = 0;
  let lastInvalid = "";
  let askedForTool = false;

  /** Counts one invalid answer: the message back to the model, or the end of the run. */
  const countInvalid = (answer: string, problems: string, message: string): OutputVerdict => {
    invalid++;
    lastInvalid = answer;
    if (invalid > retries) {
      return { kind: "fail", error: `the final answer did not match the output schema${retries > 0 ? ` after ${retries} ${retries === 1 ? "retry" : "retries"}` : ""}: ${problems}` };
    }
    return { kind: "retry", message: { role: "user", content: message } };
  };

  /** The state getters on the mode's object (a spread would copy their values once). */
  const withState = (part: Omit<StructuredOutput, "value" | "answered" | "lastInvalid">): StructuredOutput =>
    Object.defineProperties(part, {
      value: { get: () => accepted?.value, enumerable: true },
      answered: { get: () => accepted !== undefined, enumerable: true },
      lastInvalid: { get: () => lastInvalid, enumerable: true },
    }) as StructuredOutput;

  if (mode === "native") {
    return withState({
      isToolAllowed,
      registry,
      responseFormat: { name: "output", schema, strict: strictSchemaProblem(schema) === null },
      async onAnswer(text) {
        const parsed = parseAnswer(text);
        const checked = parsed.ok ? await validatedValue(schema, parsed.value) : { ok: false as const, errors: [`the answer is not JSON (${parsed.error})`] };
        if (checked.ok) return accept(checked.value);
        const errors = checked.errors;
        const list = errors.map((e) => `- ${e}`).join("\n");
        return countInvalid(text, errors.join("; "), `Your answer does not match the required JSON Schema:\n${list}\nAnswer again with only the corrected JSON value.`);
      },
      afterBatch: () => null,
      describeModelError: describeRefusal,
    });
  }

  const tool: Tool = {
    name: FINAL_ANSWER_TOOL,
    label: "Final answer",
    description: `Give your final answer by calling this tool once, when you are done: its arguments are the answer${wrapped ? " (under \"value\")" : ""}, checked against the required JSON Schema. Do not answer in text.`,
    inputSchema: toolSchema,
    parallelToolExecute: false,
    execute(_id, args: Record<string, unknown>) {
      const value = wrapped ? args.value : args;
      accepted ??= { value };
      return { content: [textContent(JSON.stringify(value))], terminate: true };
    },
  };
  const nudge = `Call the ${FINAL_ANSWER_TOOL} tool with your final answer as its arguments; an answer in text is not accepted.`;
  return withState({
    registry: withTool(registry, tool),
    isToolAllowed: (name) => name === FINAL_ANSWER_TOOL || isToolAllowed(name),
    async onAnswer(text) {
      const parsed = parseAnswer(text);
      const checked = parsed.ok ? await validatedValue(schema, parsed.value) : undefined;
      if (checked?.ok) return accept(checked.value);
      if (!askedForTool) {
        askedForTool = true;
        return { kind: "retry", message: { role: "user", content: `You answered in text. ${nudge}` } };
      }
      return countInvalid(text, `the model answered in text instead of calling ${FINAL_ANSWER_TOOL}`, `You answered in text again. ${nudge}`);
    },
    afterBatch(finished) {
      if (accepted) return null;
      for (const done of finished) {
        if (done.toolCall.name !== FINAL_ANSWER_TOOL || !done.isError) continue;
        const problems = done.result.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join(" ").replace(/\s*\n\s*/g, " ");
        // The model already has the errors in the tool result; a retry needs no extra message.
        const counted = countInvalid(done.toolCall.arguments, problems, "");
        if (counted.kind === "fail") return counted;
      }
      return null;
    },
    describeModelError: messageOf,
  });

  function accept(value: unknown): OutputVerdict {
    accepted = { value };
    return { kind: "accept", value };
  }
}

/** Whether the schema describes an object at its root (then it is a tool's parameters as is). */
function isObjectSchema(schema: JsonSchema): boolean {
  return schema.type === "object";
}

/**
 * The value an answer stands for after validation (defaults and scalar coercion applied, as to
 * tool arguments), or its errors (one line each). The value is validated inside a holder object,
 * as the final-answer tool's wrapped schema holds it, so that a coerced value at the root (the
 * string "5" for an integer schema) is the value kept, not the string that only passed.
 */
async function validatedValue(schema: JsonSchema, value: unknown): Promise<{ ok: true; value: unknown } | { ok: false; errors: string[] }> {
  const holder: Record<string, unknown> = { value };
  const errors = await validateAgainstSchema(holderSchema(schema), holder);
  return errors.length === 0 ? { ok: true, value: holder.value } : { ok: false, errors: errors.map(unheld) };
}

/** An error line of the holder as the value's own (./tools/validate.ts words a root error `(arguments): …`, a field's `a.b: …`). */
function unheld(line: string): string {
  return line.startsWith("value: ") ? `(arguments)${line.slice("value".length)}` : line.startsWith("value.") ? line.slice("value.".length) : line;
}

/** `schema` as the one property `value` of an object (the final-answer tool's parameters for a schema that is no object); kept per schema, so its validator is compiled once. */
const holders = new WeakMap<JsonSchema, JsonSchema>();
function holderSchema(schema: JsonSchema): JsonSchema {
  let holder = holders.get(schema);
  if (!holder) holders.set(schema, (holder = { type: "object", properties: { value: schema }, required: ["value"], additionalProperties: false }));
  return holder;
}

/** The JSON value of an answer's text; one surrounding ``` fence (```json …) is allowed. */
function parseAnswer(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const trimmed = text.trim();
  const fenced = /^```[A-Za-z0-9_-]*\n([\s\S]*?)\n?```$/.exec(trimmed);
  try {
    return { ok: true, value: JSON.parse(fenced ? fenced[1] : trimmed) };
  } catch (error) {
    return { ok: false, error: trimmed === "" ? "it is empty" : messageOf(error) };
  }
}

const REFUSAL_STATUSES = new Set([400, 404, 415, 422, 501]);

/** A failed request in native mode: the server's words, and what to do when it refuses response_format. */
function describeRefusal(error: unknown): string {
  const message = messageOf(error);
  const status = error instanceof ModelError ? error.status : null;
  if ((status !== null && REFUSAL_STATUSES.has(status)) || /response_format|json_schema|grammar/i.test(message)) {
    return `${message} (the request carried response_format json_schema for output.mode native; a server that does not support it needs output.mode: tool, which asks for the answer through a tool call)`;
  }
  return message;
}

/**
 * Why OpenAI's strict mode would refuse `schema`, or null when it keeps the rules: every object
 * node lists all its properties in `required` and sets `additionalProperties: false`; every
 * node has a `type` (or `$ref`, `anyOf`, `enum`, `const`); no free-form or typed maps; the root is
 * an object.
 */
export function strictSchemaProblem(schema: JsonSchema): string | null {
  if (schema.type !== "object") return "the root is not an object";
  return strictNodeProblem(schema, "(root)");
}

function strictNodeProblem(node: unknown, at: string): string | null {
  if (node === null || typeof node !== "object" || Array.isArray(node)) return `${at} is not a schema object`;
  const n = node as Record<string, unknown>;
  if (n.type === undefined && n.$ref === undefined && n.anyOf === undefined && n.enum === undefined && n.const === undefined) return `${at} has no type`;
  const types = Array.isArray(n.type) ? n.type : [n.type];
  if (types.includes("object")) {
    const props = n.properties;
    if (props === null || typeof props !== "object") return `${at} is an object without properties`;
    if (n.additionalProperties !== false) return `${at} does not set additionalProperties: false`;
    const required = Array.isArray(n.required) ? n.required : [];
    for (const key of Object.keys(props)) if (!required.includes(key)) return `${at}.${key} is not required`;
    for (const [key, value] of Object.entries(props)) {
      const problem = strictNodeProblem(value, `${at}.${key}`);
      if (problem) return problem;
    }
  }
  if (n.items !== undefined) {
    const problem = strictNodeProblem(n.items, `${at}[]`);
    if (problem) return problem;
  }
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const list = n[key];
    if (Array.isArray(list)) for (const [i, item] of list.entries()) {
      const problem = strictNodeProblem(item, `${at}.${key}[${i}]`);
      if (problem) return problem;
    }
  }
  for (const key of ["$defs", "definitions"]) {
    const defs = n[key];
    if (defs && typeof defs === "object") for (const [name, item] of Object.entries(defs)) {
      const problem = strictNodeProblem(item, `${at}.${key}.${name}`);
      if (problem) return problem;
    }
  }
  return null;
}

/** `registry` with one more tool, for this run only (the shared registry is left alone). */
function withTool(registry: ToolRegistry, tool: Tool): ToolRegistry {
  const entry = { tool, source: { kind: "builtin" } as ToolSource };
  return new Proxy(registry, {
    get(target, prop) {
      switch (prop) {
        case "get":
          return (name: string) => (name === tool.name ? tool : target.get(name));
        case "entry":
          return (name: string) => (name === tool.name ? entry : target.entry(name));
        case "has":
          return (name: string) => name === tool.name || target.has(name);
        case "list":
          return () => [...target.list(), tool];
        default: {
          const value = Reflect.get(target, prop, target) as unknown;
          return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        }
      }
    },
  });
}
