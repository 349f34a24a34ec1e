/**
 * `yiem doctor`'s probes: small Chat Completions requests that find out what a server takes.
 * Rules:
 * - every probe is one POST to `{baseURL}/chat/completions` with the spec's model and key, a
 *   one-line prompt and no token limit (except the limit probes), run one after another;
 * - a probe **works** when the server did what was asked, is **refused** when it answered with an
 *   error (status ≥ 400, or an error inside a 200 body or stream: its own words are kept), and
 *   **failed** when it answered but not as asked (no tool call, not JSON); `info` rows only report;
 * - a server that cannot be reached ends the probing after the first probe (the rest are skipped);
 * - reasoning fields are reported as the server sends them; nothing is sent back.
 * The spec keys the results call for are worked out in ./advice.ts.
 */
import { describeErrorBody, jsonErrorText } from "../provider/server-errors.js";
import { parseTextToolCalls } from "../provider/text-tool-calls.js";
import { nodeFetch } from "../provider/http/node-fetch.js";

export type ProbeName =
  | "plain" | "stream" | "streamOptions" | "toolCall" | "streamTools" | "parallelCalls"
  | "maxTokens" | "maxCompletionTokens" | "reasoning" | "responseFormat";

export type ProbeResult = "works" | "refused" | "failed" | "skipped" | "info";

export interface Probe {
  name: ProbeName;
  /** What was asked, for people. */
  label: string;
  result: ProbeResult;
  /** What happened: the server's own words when it refused. */
  detail: string;
  /** The HTTP status, when an answer came. */
  status?: number;
  /** For the tool probes: how the calls came. */
  calls?: { count: number; asText: boolean };
}

export interface ProbeTarget {
  baseURL: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
  fetch?: typeof globalThis.fetch;
}

const LABELS: Record<ProbeName, string> = {
  plain: "plain answer",
  stream: "streaming",
  streamOptions: "stream_options (usage in streams)",
  toolCall: "forced tool call",
  streamTools: "streaming with tools",
  parallelCalls: "two parallel calls",
  maxTokens: "max_tokens",
  maxCompletionTokens: "max_completion_tokens",
  reasoning: "reasoning fields",
  responseFormat: "response_format json_object",
};

const ECHO_TOOL = {
  type: "function",
  function: {
    name: "echo",
    description: "Returns its text.",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
};
const FORCE_ECHO = { type: "function", function: { name: "echo" } };
const REASONING_FIELDS = ["reasoning_content", "reasoning", "reasoning_details"];

type Json = Record<string, any>;

/** What one request got: a status and JSON (a stream's chunks joined into one message), or why nothing came. */
interface Answer {
  status?: number;
  /** The message of choice 0 (a stream's deltas assembled). */
  message?: Json;
  /** The server's error: an error status, or an error inside the body or stream. */
  refusal?: string;
  /** No answer, or not the kind asked for. */
  problem?: string;
  streamed?: boolean;
  usage?: boolean;
}

async function send(target: ProbeTarget, body: Json): Promise<Answer> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  let response: Response;
  let text: string;
  try {
    response = await (target.fetch ?? nodeFetch)(`${target.baseURL.replace(/\/+$/, "")}/chat/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: target.model, ...body }),
      signal: AbortSignal.timeout(target.timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { problem: `no answer: ${cause?.code ?? cause?.message ?? (error as Error).message}` };
  }
  const contentType = response.headers.get("content-type") ?? "";
  if (response.status >= 400) return { status: response.status, refusal: `${response.status}: ${describeErrorBody(text, contentType).detail}` };
  if (/text\/event-stream/i.test(contentType) || /^\s*(data|event):/.test(text)) return { status: response.status, ...readStream(text) };
  let json: Json;
  try {
    json = JSON.parse(text) as Json;
  } catch {
    return { status: response.status, problem: `not JSON: ${describeErrorBody(text, contentType).detail}` };
  }
  if (json.error || json.object === "error") return { status: response.status, refusal: `${response.status}: ${jsonErrorText(json)}` };
  const message = json.choices?.[0]?.message;
  if (!message) return { status: response.status, problem: "the answer has no choices[0].message" };
  return { status: response.status, message, streamed: false, usage: json.usage !== undefined };
}

/** An SSE body read whole: the deltas of choice 0 assembled (text, calls by index, reasoning). */
function readStream(text: string): Omit<Answer, "status"> {
  const message: Json = { content: "" };
  const calls: Json[] = [];
  let usage = false;
  let chunks = 0;
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith("error:")) return { refusal: line.slice(6).trim() };
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (data === "[DONE]" || data === "") continue;
    let chunk: Json;
    try {
      chunk = JSON.parse(data) as Json;
    } catch {
      return { problem: `a stream line is not JSON: ${data.slice(0, 120)}` };
    }
    if (chunk.error) return { refusal: jsonErrorText(chunk) };
    chunks++;
    if (chunk.usage) usage = true;
    const delta = chunk.choices?.[0]?.delta ?? {};
    if (typeof delta.content === "string") message.content += delta.content;
    for (const field of REASONING_FIELDS) if (delta[field] !== undefined && delta[field] !== null) message[field] = delta[field];
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      const at = typeof call.index === "number" ? call.index : calls.length ? calls.length - 1 : 0;
      const known = calls[at] ?? (calls[at] = { function: { name: "", arguments: "" } });
      if (call.function?.name) known.function.name = call.function.name;
      if (typeof call.function?.arguments === "string") known.function.arguments += call.function.arguments;
    }
  }
  if (chunks === 0) return { problem: "the stream held no chunk" };
  if (calls.length) message.tool_calls = calls.filter(Boolean);
  return { message, streamed: true, usage };
}

/** The tool calls of a message: structured ones, else calls written in its text. */
function callsOf(message: Json): { count: number; asText: boolean; names: string[] } {
  const structured = Array.isArray(message.tool_calls) ? message.tool_calls : message.tool_calls ? [message.tool_calls] : [];
  if (structured.length) return { count: structured.length, asText: false, names: structured.map((c: Json) => c?.function?.name ?? c?.name) };
  const fromText = typeof message.content === "string" ? parseTextToolCalls(message.content) : null;
  return fromText ? { count: fromText.toolCalls.length, asText: true, names: fromText.toolCalls.map((c) => c.name) } : { count: 0, asText: false, names: [] };
}

const USER = (content: string) => ({ messages: [{ role: "user", content }] });
const short = (text: unknown) => {
  const s = typeof text === "string" ? text.replace(/\s+/g, " ").trim() : "";
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
};

function row(name: ProbeName, answer: Answer, works: (message: Json) => { ok: boolean; detail: string; calls?: Probe["calls"] }): Probe {
  const base = { name, label: LABELS[name], ...(answer.status !== undefined ? { status: answer.status } : {}) };
  if (answer.refusal !== undefined) return { ...base, result: "refused", detail: answer.refusal };
  if (answer.problem !== undefined || !answer.message) return { ...base, result: "failed", detail: answer.problem ?? "no answer" };
  const verdict = works(answer.message);
  return { ...base, result: verdict.ok ? "works" : "failed", detail: verdict.detail, ...(verdict.calls ? { calls: verdict.calls } : {}) };
}

function toolVerdict(wanted: number) {
  return (message: Json) => {
    const calls = callsOf(message);
    const shown = calls.names.join(", ");
    if (calls.count === 0) return { ok: false, detail: `no tool call; the answer: "${short(message.content)}"`, calls: { count: 0, asText: false } };
    const how = calls.asText ? " written in the text, not as tool_calls" : "";
    return { ok: calls.count >= wanted && !calls.asText, detail: `${calls.count} call${calls.count === 1 ? "" : "s"} (${shown})${how}`, calls: { count: calls.count, asText: calls.asText } };
  };
}

/** Runs every probe against `target`, in order. */
export async function runProbes(target: ProbeTarget): Promise<Probe[]> {
  const probes: Probe[] = [];
  const reasoning = new Set<string>();
  const noteReasoning = (answer: Answer) => {
    for (const field of REASONING_FIELDS) {
      const value = answer.message?.[field];
      if (value !== undefined && value !== null && value !== "" && !(Array.isArray(value) && value.length === 0)) reasoning.add(field);
    }
  };
  const plain = await send(target, USER("Reply with the one word: ok"));
  noteReasoning(plain);
  probes.push(row("plain", plain, (m) => ({ ok: true, detail: `"${short(m.content)}"` })));
  if (plain.status === undefined) {
    for (const name of Object.keys(LABELS).slice(1) as ProbeName[]) probes.push({ name, label: LABELS[name], result: "skipped", detail: "the server did not answer" });
    return probes;
  }
  const streamed = (m: Json, answer: Answer) => (answer.streamed ? { ok: true, detail: `"${short(m.content)}"` } : { ok: false, detail: "answered with one JSON completion, not a stream (yiem reads it)" });
  const stream = await send(target, { ...USER("Reply with the one word: ok"), stream: true });
  probes.push(row("stream", stream, (m) => streamed(m, stream)));
  const options = await send(target, { ...USER("Reply with the one word: ok"), stream: true, stream_options: { include_usage: true } });
  probes.push(row("streamOptions", options, (m) => (options.streamed ? { ok: true, detail: options.usage ? "usage sent" : "taken, but no usage sent" } : streamed(m, options))));
  const toolBody = { ...USER("Call the echo tool with the text ok."), tools: [ECHO_TOOL] };
  const forced = await send(target, { ...toolBody, tool_choice: FORCE_ECHO });
  noteReasoning(forced);
  probes.push(row("toolCall", forced, toolVerdict(1)));
  const streamTools = await send(target, { ...toolBody, tool_choice: FORCE_ECHO, stream: true });
  noteReasoning(streamTools);
  probes.push(row("streamTools", streamTools, toolVerdict(1)));
  const parallel = await send(target, { ...USER('Call the echo tool twice in this one reply: once with the text "a" and once with the text "b".'), tools: [ECHO_TOOL] });
  probes.push(row("parallelCalls", parallel, toolVerdict(2)));
  const limited = (field: string) => send(target, { ...USER("Reply with the one word: ok"), [field]: 32 });
  probes.push(row("maxTokens", await limited("max_tokens"), () => ({ ok: true, detail: "taken" })));
  probes.push(row("maxCompletionTokens", await limited("max_completion_tokens"), () => ({ ok: true, detail: "taken" })));
  probes.push({
    name: "reasoning",
    label: LABELS.reasoning,
    result: "info",
    detail: reasoning.size ? `sends ${[...reasoning].join(", ")} (yiem sends it back with the turn's tool calls)` : "none sent",
  });
  const format = await send(target, { ...USER('Reply with the JSON object {"ok": true} and nothing else.'), response_format: { type: "json_object" } });
  probes.push(row("responseFormat", format, (m) => {
    try {
      const value = JSON.parse(String(m.content ?? ""));
      return { ok: value !== null && typeof value === "object", detail: `"${short(m.content)}"` };
    } catch {
      return { ok: false, detail: `not JSON: "${short(m.content)}"` };
    }
  }));
  return probes;
}
