import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createReplayProvider } from "../../src/provider/replay.js";
import { createRecorder } from "../../src/provider/record.js";
import { createScriptedProvider } from "../../src/provider/scripted.js";
import { createProvider } from "../../src/provider/create.js";
import { ModelError, type ChatMessage, type ModelRequest, type ToolSpec } from "../../src/provider/types.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "yiem-replay-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const tool = (name: string): ToolSpec => ({ name, description: name, parameters: { type: "object", properties: {} } });
const tools = [tool("getWeather"), tool("getTime")];

function request(messages: ChatMessage[] = [{ role: "user", content: "hi" }], offered = tools) {
  const deltas: string[] = [];
  const req: ModelRequest = { messages, tools: offered, signal: new AbortController().signal, onTextDelta: (d) => deltas.push(d) };
  return Object.assign(req, { deltas });
}

async function file(name: string, text: string): Promise<string> {
  const full = path.join(dir, name);
  await writeFile(full, text);
  return full;
}

async function failure(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

const toolResult = (toolName: string, text: string, id = "c1"): ChatMessage => ({
  role: "tool",
  toolCallId: id,
  toolName,
  isError: false,
  content: [{ type: "text", text }],
});

describe("replay provider", () => {
  it("answers turn by turn from a JSONL file", async () => {
    const replay = await file(
      "happy.jsonl",
      [
        JSON.stringify({ content: "", toolCalls: [{ id: "c1", name: "getWeather", arguments: '{"city":"Oslo"}' }] }),
        "",
        JSON.stringify({ content: "Sunny.", usage: { promptTokens: 5, completionTokens: 2, totalTokens: 7 }, finishReason: "stop" }),
      ].join("\n"),
    );
    const provider = createReplayProvider(replay);
    expect(provider.model).toBe(`replay:${replay}`);
    const first = await provider.complete(request());
    expect(first.message).toEqual({ role: "assistant", content: "", toolCalls: [{ id: "c1", name: "getWeather", arguments: '{"city":"Oslo"}' }] });
    expect(first.finishReason).toBe("tool_calls");
    expect(first.usage).toEqual({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });
    const req = request();
    const second = await provider.complete(req);
    expect(second.message.content).toBe("Sunny.");
    expect(second.usage).toEqual({ promptTokens: 5, completionTokens: 2, totalTokens: 7 });
    expect(req.deltas).toEqual(["Sunny."]);
  });

  it("accepts a JSON array with OpenAI-form tool_calls and object arguments", async () => {
    const replay = await file(
      "openai-form.json",
      JSON.stringify([
        {
          content: null,
          tool_calls: [
            { id: "x1", type: "function", function: { name: "getTime", arguments: { zone: "UTC" } } },
            { type: "function", function: { name: "getWeather", arguments: '{"city":"Rome"}' } },
          ],
          finish_reason: "tool_calls",
          usage: { prompt_tokens: 4, completion_tokens: 1 },
        },
      ]),
    );
    const response = await createReplayProvider(replay).complete(request());
    expect(response.message.content).toBe("");
    expect(response.message.toolCalls).toEqual([
      { id: "x1", name: "getTime", arguments: '{"zone":"UTC"}' },
      { id: "call_1_2", name: "getWeather", arguments: '{"city":"Rome"}' },
    ]);
    expect(response.usage).toEqual({ promptTokens: 4, completionTokens: 1, totalTokens: 5 });
  });

  it("fills {{result:TOOL}} and {{result}} from the latest tool results", async () => {
    const replay = await file(
      "templates.jsonl",
      JSON.stringify({ content: "Weather: {{result:getWeather}} / last: {{result}} / none: [{{result:nope}}]" }) + "\n",
    );
    const messages: ChatMessage[] = [
      { role: "user", content: "go" },
      toolResult("getWeather", "rainy", "c1"),
      toolResult("getWeather", "sunny, 21 C", "c2"),
      toolResult("getTime", "12:00", "c3"),
    ];
    const req = request(messages);
    const response = await createReplayProvider(replay).complete(req);
    expect(response.message.content).toBe("Weather: sunny, 21 C / last: 12:00 / none: []");
    expect(req.deltas).toEqual([response.message.content]);
  });

  it("says how many turns the file has when the run asks for more", async () => {
    const replay = await file("short.jsonl", JSON.stringify({ content: "only one" }) + "\n");
    const provider = createReplayProvider(replay);
    await provider.complete(request());
    const error = await failure(provider.complete(request()));
    expect(error.message).toBe(`replay file ${replay} has 1 turns; the run asked for turn 2`);
  });

  it("rejects a recorded call to a tool the run does not offer", async () => {
    const replay = await file("unknown.jsonl", JSON.stringify({ toolCalls: [{ name: "deleteEverything", arguments: "{}" }] }) + "\n");
    const error = await failure(createReplayProvider(replay).complete(request()));
    expect(error.message).toContain(replay);
    expect(error.message).toContain('"deleteEverything"');
    expect(error.message).toContain("getWeather, getTime");
  });

  it("names the line of a line that is not JSON", async () => {
    const replay = await file("bad.jsonl", `${JSON.stringify({ content: "a" })}\n{not json\n`);
    const error = await failure(createReplayProvider(replay).complete(request()));
    expect(error.message).toMatch(new RegExp(`replay file .*bad\\.jsonl line 2 is not valid JSON`));
  });

  it("reports a missing file", async () => {
    const missing = path.join(dir, "nope.jsonl");
    const error = await failure(createReplayProvider(missing).complete(request()));
    expect(error.message).toBe(`replay file ${missing} does not exist`);
  });

  it("refuses a FIFO or a folder by what it is, without waiting on it", async () => {
    const fifo = path.join(dir, "fifo.jsonl");
    execFileSync("mkfifo", [fifo]);
    expect((await failure(createReplayProvider(fifo).complete(request()))).message).toBe(`replay file ${fifo} is not a regular file (a FIFO)`);
    expect((await failure(createReplayProvider(dir).complete(request()))).message).toBe(`replay file ${dir} is not a regular file (a folder)`);
  });
});

describe("recorder", () => {
  it("records a run that replays to the same turns, atomically and without secrets", async () => {
    const target = path.join(dir, "rec", "run.jsonl");
    const inner = createScriptedProvider([
      { toolCalls: [{ id: "t1", name: "getWeather", arguments: { city: "Oslo" } }], usage: { promptTokens: 10, completionTokens: 3 } },
      { content: "Sunny in Oslo.", usage: { promptTokens: 20, completionTokens: 4 } },
    ]);
    const recorder = createRecorder(inner, target);
    expect(recorder.model).toBe("scripted");
    const live = [await recorder.complete(request()), await recorder.complete(request())];
    await recorder.flush();

    const text = await readFile(target, "utf8");
    expect(text.trim().split("\n")).toHaveLength(2);
    expect(JSON.parse(text.split("\n")[0])).toEqual({
      content: "",
      toolCalls: [{ id: "t1", name: "getWeather", arguments: '{"city":"Oslo"}' }],
      usage: { promptTokens: 10, completionTokens: 3, totalTokens: 13 },
      finishReason: "tool_calls",
    });
    expect(await readdir(path.dirname(target))).toEqual(["run.jsonl"]);

    const replay = createReplayProvider(target);
    const replayed = [await replay.complete(request()), await replay.complete(request())];
    expect(replayed).toEqual(live);
  });

  it("creates an empty recording on flush when no turn was made", async () => {
    const target = path.join(dir, "empty.jsonl");
    await createRecorder(createScriptedProvider([]), target).flush();
    expect(await readFile(target, "utf8")).toBe("");
  });
});

describe("createProvider", () => {
  it("makes a replay provider for replay:FILE and an OpenAI provider otherwise", async () => {
    const replay = await file("create.jsonl", JSON.stringify({ content: "hi" }) + "\n");
    const fromReplay = await createProvider({ name: `replay:${replay}` });
    expect(fromReplay.model).toBe(`replay:${replay}`);
    expect((await fromReplay.complete(request())).message.content).toBe("hi");

    const openai = await createProvider({ name: "gpt-4o-mini", apiKey: "k", stream: false, temperature: 0 });
    expect(openai.model).toBe("gpt-4o-mini");
    expect(openai.describeRequest!({ messages: [{ role: "user", content: "x" }], tools: [] })).toEqual({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "x" }],
      temperature: 0,
    });
    await expect(createProvider({ name: "replay:" })).rejects.toThrow(/names no file/);
  });
});
