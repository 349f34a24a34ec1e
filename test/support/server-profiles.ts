/**
 * Request rules of real OpenAI-compatible servers, for `startChatServer(script, { profile })`.
 * Each profile refuses exactly what its server refuses, with that server's status and body
 * shape (taken from the servers' source and issue threads); everything else goes to the script.
 */
import { RawSse, type ChatReply, type ProfileRefusal, type ServerProfile } from "./chat-server.js";

type Body = Record<string, any>;
type Message = Record<string, any>;

const refuse = (rule: string, reply: ChatReply): ProfileRefusal => ({ rule, reply });

/** A profile from rules tried in order; the first refusal wins. */
function profile(name: string, ...rules: Array<(body: Body, sent: ChatReply[]) => ProfileRefusal | null>): ServerProfile {
  return {
    name,
    check(body, context) {
      for (const rule of rules) {
        const refusal = rule(body, context.sent);
        if (refusal) return refusal;
      }
      return null;
    },
  };
}

// ---- what the server sent before ----

/** Per tool call id the server sent: the reasoning fields of the turn that made it (streamed pieces joined). */
export function reasoningByCallId(sent: ChatReply[]): Map<string, Record<string, unknown>> {
  const byId = new Map<string, Record<string, unknown>>();
  for (const reply of sent) {
    const fields: Record<string, unknown> = {};
    const ids: string[] = [];
    const take = (source: Message, join: boolean) => {
      for (const field of ["reasoning_content", "reasoning"]) {
        if (typeof source[field] === "string") fields[field] = join ? ((fields[field] as string | undefined) ?? "") + source[field] : source[field];
      }
      if (Array.isArray(source.reasoning_details)) fields.reasoning_details = mergeDetails((fields.reasoning_details as Message[]) ?? [], source.reasoning_details);
      const calls = Array.isArray(source.tool_calls) ? source.tool_calls : [];
      for (const call of calls) if (typeof call?.id === "string") ids.push(call.id);
    };
    if (reply.kind === "json") take((reply.body as Body)?.choices?.[0]?.message ?? {}, false);
    else if (reply.kind === "sse") {
      for (const chunk of reply.chunks) if (typeof chunk === "object" && !(chunk instanceof RawSse)) take((chunk as Body).choices?.[0]?.delta ?? {}, true);
    }
    for (const id of ids) byId.set(id, fields);
  }
  return byId;
}

/** Streamed reasoning_details pieces as the whole list: a piece with the index and type of the item before it extends its text. */
function mergeDetails(list: Message[], pieces: Message[]): Message[] {
  const out = list.map((item) => ({ ...item }));
  for (const piece of pieces) {
    const last = out[out.length - 1];
    if (last && typeof piece.index === "number" && last.index === piece.index && last.type === piece.type) {
      last.text = `${last.text ?? ""}${piece.text ?? ""}`;
    } else out.push({ ...piece });
  }
  return out;
}

// ---- rules ----

/** Mistral's 422 for a field its pydantic models forbid. */
function mistralExtraForbidden(loc: Array<string | number>, input: unknown): ChatReply {
  return {
    kind: "error",
    status: 422,
    body: {
      object: "error",
      message: { detail: [{ type: "extra_forbidden", loc: ["body", ...loc], msg: "Extra inputs are not permitted", input }] },
      type: "invalid_request_message_error",
      param: null,
      code: null,
    },
  };
}

const MISTRAL_TOP_LEVEL = new Set(["model", "messages", "tools", "tool_choice", "temperature", "top_p", "max_tokens", "stream", "stop", "random_seed", "response_format", "presence_penalty", "frequency_penalty", "n", "safe_prompt", "parallel_tool_calls", "prediction", "prompt_mode"]);
const MISTRAL_MESSAGE_FIELDS = new Set(["role", "content", "tool_calls", "tool_call_id", "name", "prefix"]);

/** Mistral's tool-call ids are 9 letters or digits; it refuses any other id on assistant and tool messages. */
function mistralToolCallIds(body: Body): ProfileRefusal | null {
  for (const message of body.messages as Message[]) {
    const ids = [...(Array.isArray(message.tool_calls) ? message.tool_calls.map((c: Message) => c?.id) : []), ...(message.role === "tool" ? [message.tool_call_id] : [])];
    for (const id of ids) {
      if (typeof id !== "string" || !/^[a-zA-Z0-9]{9}$/.test(id)) {
        return refuse(`tool call id ${String(id)}`, {
          kind: "error",
          status: 400,
          body: { object: "error", message: `Tool call id was ${String(id)} but must be a-z, A-Z, 0-9, with a length of 9.`, type: "invalid_request_message_error", param: null, code: "3280" },
        });
      }
    }
  }
  return null;
}

function mistralFields(body: Body): ProfileRefusal | null {
  for (const key of Object.keys(body)) {
    if (!MISTRAL_TOP_LEVEL.has(key)) return refuse(`unknown field ${key}`, mistralExtraForbidden([key], body[key]));
  }
  for (const [i, message] of (body.messages as Message[]).entries()) {
    for (const key of Object.keys(message)) {
      if (!MISTRAL_MESSAGE_FIELDS.has(key)) return refuse(`unknown message field ${key}`, mistralExtraForbidden(["messages", i, key], message[key]));
    }
  }
  return null;
}

/** Gemini's error body: a JSON array holding one Google error. */
function geminiError(message: string): ChatReply {
  return { kind: "error", status: 400, body: [{ error: { code: 400, message, status: "INVALID_ARGUMENT" } }] };
}

const GEMINI_MESSAGE_FIELDS = new Set(["role", "content", "tool_calls", "tool_call_id", "name"]);

function geminiMessages(body: Body): ProfileRefusal | null {
  for (const [i, message] of (body.messages as Message[]).entries()) {
    for (const key of Object.keys(message)) {
      if (!GEMINI_MESSAGE_FIELDS.has(key)) {
        return refuse(`unknown message field ${key}`, geminiError(`Invalid JSON payload received. Unknown name "${key}" at 'messages[${i}]': Cannot find field.`));
      }
    }
    if (message.role === "tool" && (typeof message.name !== "string" || message.name === "")) {
      return refuse("tool message without name", geminiError(`* GenerateContentRequest.contents[${i}].parts[0].function_response.name: Name cannot be empty.\n`));
    }
  }
  return null;
}

const GROQ_MESSAGE_FIELDS = new Set(["role", "content", "name", "tool_calls", "tool_call_id", "reasoning"]);

/** Groq: a message property it does not know (e.g. `reasoning_content`) is a 400 naming it. */
function groqMessages(body: Body, allowed = GROQ_MESSAGE_FIELDS): ProfileRefusal | null {
  for (const [i, message] of (body.messages as Message[]).entries()) {
    for (const key of Object.keys(message)) {
      if (allowed.has(key)) continue;
      const text = `'messages.${i}' : for 'role:${message.role}' the following must be satisfied[('messages.${i}' : property '${key}' is unsupported)]`;
      return refuse(`unknown message field ${key}`, { kind: "error", status: 400, body: { error: { message: text, type: "invalid_request_error" } } });
    }
  }
  return null;
}

/** Turn 2 must carry back `field` exactly as the server sent it with those tool calls. */
function reasoningSentBack(field: string, refusal: (index: number) => ChatReply) {
  return (body: Body, sent: ChatReply[]): ProfileRefusal | null => {
    const byId = reasoningByCallId(sent);
    for (const [i, message] of (body.messages as Message[]).entries()) {
      if (message.role !== "assistant" || !Array.isArray(message.tool_calls)) continue;
      const expected = byId.get(message.tool_calls[0]?.id)?.[field];
      if (expected === undefined) continue;
      if (JSON.stringify(message[field]) !== JSON.stringify(expected)) return refuse(`${field} not sent back at message ${i}`, refusal(i));
    }
    return null;
  };
}

/** llama.cpp's answer to a request it cannot take: HTTP 500 with `{error: {code, message, type: "server_error"}}`. */
export function llamaCppError(message: string): ChatReply {
  return { kind: "error", status: 500, body: { error: { code: 500, message, type: "server_error" } } };
}

/** llama.cpp parses every assistant call's arguments (nlohmann::json) when it renders the history; one that fails is a 500. */
function llamaCppToolArguments(body: Body): ProfileRefusal | null {
  for (const [i, message] of (body.messages as Message[]).entries()) {
    for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
      const args = call?.function?.arguments;
      try {
        JSON.parse(args);
      } catch (error) {
        return refuse(`unparseable arguments at message ${i}`, llamaCppError(`Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] ${(error as Error).message}`));
      }
    }
  }
  return null;
}

// ---- profiles ----

export const profiles = {
  /** Mistral: 422 for any field it does not know (stream_options, max_completion_tokens, reasoning fields on messages); 400 for a tool-call id that is not 9 letters or digits. */
  mistral: (): ServerProfile => profile("mistral", mistralFields, mistralToolCallIds),
  /** Gemini's OpenAI endpoint: tool messages need `name`; unknown message fields are refused; errors come as an array. */
  gemini: (): ServerProfile => profile("gemini", geminiMessages),
  /** DeepSeek thinking mode: an assistant turn with tool calls must carry back its reasoning_content. */
  deepseek: (): ServerProfile =>
    profile(
      "deepseek",
      reasoningSentBack("reasoning_content", (i) => ({
        kind: "error",
        status: 400,
        body: { error: { message: `Missing \`reasoning_content\` field in the assistant message at message index ${i}.`, type: "invalid_request_error", param: null, code: "invalid_request_error" } },
      })),
    ),
  /** Gemini through OpenRouter: reasoning_details (thought signatures) must come back with the tool calls. */
  openrouterGemini: (): ServerProfile =>
    profile(
      "openrouter-gemini",
      reasoningSentBack("reasoning_details", () => ({
        kind: "error",
        status: 400,
        body: { error: { message: "Provider returned error", code: 400, metadata: { raw: "Function call is missing a thought_signature in functionCall parts.", provider_name: "Google" } } },
      })),
    ),
  /** OpenAI reasoning models: max_tokens is refused. */
  openaiReasoning: (): ServerProfile =>
    profile("openai-reasoning", (body) =>
      "max_tokens" in body
        ? refuse("max_tokens", {
            kind: "error",
            status: 400,
            body: { error: { message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", type: "invalid_request_error", param: "max_tokens", code: "unsupported_parameter" } },
          })
        : null,
    ),
  /** Groq: unknown message properties are refused (it sends and takes back only `reasoning`); usage may come in `x_groq`. */
  groq: (): ServerProfile => profile("groq", (body) => groqMessages(body)),
  /** Groq with a model that sends `reasoning` but refuses it back (seen with deepseek-r1-distill models). */
  groqRefusingReasoning: (): ServerProfile =>
    profile("groq-refusing-reasoning", (body) => groqMessages(body, new Set([...GROQ_MESSAGE_FIELDS].filter((f) => f !== "reasoning")))),
  /** llama.cpp's server: a request whose history holds tool-call arguments that are not JSON is a 500. */
  llamaCpp: (): ServerProfile => profile("llama.cpp", llamaCppToolArguments),
  /** A llama.cpp build that cannot stream with tools: a streamed request that offers tools is a 500. */
  llamaCppNoStreamTools: (): ServerProfile =>
    profile("llama.cpp-no-stream-tools", (body) =>
      body.stream === true && Array.isArray(body.tools) && body.tools.length > 0 ? refuse("stream with tools", llamaCppError("Cannot use tools with stream")) : null,
    ),
  /**
   * llama.cpp's structured output: `response_format: json_schema` becomes a grammar, and a grammar
   * together with offered tools is refused ("Cannot use custom grammar constraints with tools.",
   * server/utils.hpp); a json_schema without its `schema` is a 500 too. Also the tool-argument rule.
   */
  llamaCppJsonSchema: (): ServerProfile =>
    profile("llama.cpp-json-schema", llamaCppToolArguments, (body) => {
      const format = body.response_format;
      if (!format || format.type !== "json_schema") return null;
      if (typeof format.json_schema?.schema !== "object") return refuse("json_schema without schema", llamaCppError("response_format json_schema needs a schema"));
      const toolsOn = Array.isArray(body.tools) && body.tools.length > 0 && body.tool_choice !== "none";
      return toolsOn ? refuse("grammar with tools", llamaCppError("Cannot use custom grammar constraints with tools.")) : null;
    }),
  /** A server that takes anything the official schema allows (the schema check still runs). */
  lenient: (name: string): ServerProfile => profile(name),
};
