/**
 * A scripted Chat Completions server for the benchmarks, on 127.0.0.1 (port 0), answering at once.
 * Rules:
 * - the reply depends only on the request body (so a replayed request gets the same reply):
 *   `script(body)` returns `{ toolCalls: [{name, arguments}] }` or `{ content: "text" }`;
 * - `stream: true` requests get SSE (role + tool-call deltas + finish + usage chunks, `[DONE]`),
 *   others a JSON `chat.completion`; each reply is written with a single `end()`;
 * - with `record: true`, every raw request body is kept in `bodies` (for the raw-RTT replay).
 */
import { createServer } from "node:http";

const MODEL = "bench-model";
const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

/** How many tool results the conversation of `body` holds: the round trips done so far. */
export function toolResultCount(body) {
  let n = 0;
  for (const m of body.messages ?? []) if (m.role === "tool") n++;
  return n;
}

export async function startChatServer(script, { record = false } = {}) {
  const bodies = [];
  let counter = 0;
  const server = createServer((req, res) => {
    const parts = [];
    req.on("data", (d) => parts.push(d));
    req.on("end", () => {
      const raw = Buffer.concat(parts).toString("utf8");
      if (record) bodies.push(raw);
      let body;
      try {
        body = JSON.parse(raw);
      } catch {
        res.writeHead(400, { "content-type": "application/json" });
        res.end('{"error":{"message":"bad json"}}');
        return;
      }
      const turn = script(body);
      const id = `chatcmpl-${++counter}`;
      if (body.stream) {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        res.end(sse(id, turn));
      } else {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(completion(id, turn)));
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    bodies,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function toolCallsOf(turn) {
  return (turn.toolCalls ?? []).map((c, i) => ({ id: c.id ?? `call_${i + 1}`, name: c.name, arguments: c.arguments }));
}

function completion(id, turn) {
  const calls = toolCallsOf(turn);
  const message = { role: "assistant", content: turn.content ?? null, refusal: null };
  if (calls.length) message.tool_calls = calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
  return {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: MODEL,
    choices: [{ index: 0, message, finish_reason: calls.length ? "tool_calls" : "stop", logprobs: null }],
    usage: USAGE,
  };
}

function sse(id, turn) {
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta, finish = null) => ({ id, object: "chat.completion.chunk", created, model: MODEL, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] });
  const calls = toolCallsOf(turn);
  const chunks = [chunk({ role: "assistant", content: "" })];
  if (turn.content) chunks.push(chunk({ content: turn.content }));
  calls.forEach((c, index) => {
    chunks.push(chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] }));
    chunks.push(chunk({ tool_calls: [{ index, function: { arguments: c.arguments } }] }));
  });
  chunks.push(chunk({}, calls.length ? "tool_calls" : "stop"));
  chunks.push({ id, object: "chat.completion.chunk", created, model: MODEL, choices: [], usage: USAGE });
  return chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n";
}
