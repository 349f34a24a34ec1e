/**
 * Battery: security. Secrets (the API key, values of secret-named variables) never reach any
 * output; escape sequences from the model or tools never reach the terminal in pretty mode;
 * `__proto__` / `constructor` / `prototype` keys in arguments are plain data.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { defineTool, toolResult } from "../../../src/tools/define.js";
import { reply, startChatServer, type ChatServer } from "../../support/chat-server.js";
import { echoTool, runScripted, textOf, toolMessages } from "../../support/loop.js";
import { createScriptedProvider } from "../../../src/provider/scripted.js";
import { withTextToolCalls } from "../../../src/provider/text-tool-calls.js";
import { SECRET_KEY, SECRET_TOKEN, eventsOf, expectNoSecrets, expectRunEnded, writeSpec, yiem } from "../../fixtures/battery/harness.js";

let dir: string;
let spec: string;
let server: ChatServer | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "yiem-battery-security-"));
  spec = writeSpec(dir, "security", { extra: ["systemPrompt: \"Service token: ${MY_SERVICE_TOKEN}\""] });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const call = (id: string, name: string, args: object = {}) => ({ id, name, arguments: JSON.stringify(args) });

/** A run that tries every way a secret could reach the output: tool results, partials, errors, the answer. */
const leakyScript = () => [
  reply.error(500, `proxy failed for bearer ${SECRET_KEY} and token ${SECRET_TOKEN}`, { "retry-after-ms": "1" }),
  reply.stream({ content: `Calling with ${SECRET_TOKEN}`, toolCalls: [call("l", "leak"), call("e", "envdump"), call("x", "echo", { text: SECRET_TOKEN })] }),
  reply.stream({ content: `Your token is ${SECRET_TOKEN}.` }),
];

describe("secrets never appear in the output", () => {
  it("run with ndjson events and --record: not in stdout, events, retry messages, tool results or the replay file", async () => {
    server = await startChatServer(leakyScript());
    const record = join(dir, "recorded.jsonl");
    const r = await yiem(["run", "-c", spec, "--record", record, "go"], { server });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    expect(eventsOf(r, "retry")).toHaveLength(1);
    expect(eventsOf(r, "toolExecutionEnd")).toHaveLength(3);
    expect(r.stdout).toContain("Your token is ***.");
    // Streamed in 3-character deltas: the secret is hidden in the joined text too, not only per line.
    const streamed = eventsOf(r, "messageUpdate").map((e) => e.delta).join("");
    expect(streamed).toBe("Calling with ***Your token is ***.");
    expectNoSecrets(streamed);
    expectNoSecrets(readFileSync(record, "utf8"));
    // The tool did see the real value (redaction is of output, not of what the model is sent).
    expect(JSON.stringify(server.requests[2].messages)).toContain(SECRET_TOKEN);
    // A command tool's environment never has secret-named variables at all.
    const env = eventsOf(r, "toolExecutionEnd").find((e) => e.toolCallId === "e")!.result.content[0].text as string;
    expect(env).not.toMatch(/^(TEST_API_KEY|MY_SERVICE_TOKEN)=/m);
    expect(env).toMatch(/^YIEM_TOOL_NAME=envdump$/m);
  });

  it("run with pretty events: not in stderr or stdout", async () => {
    server = await startChatServer(leakyScript());
    const r = await yiem(["run", "-c", spec, "--events", "pretty", "go"], { server });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("leak");
    expectNoSecrets(r.stdout, r.stderr);
  });

  it("a model error that echoes the key and the token (exit 1): not in agentEnd.error", async () => {
    server = await startChatServer([reply.error(401, `Incorrect API key provided: ${SECRET_KEY}; token ${SECRET_TOKEN}`)]);
    const r = await yiem(["run", "-c", spec, "--output", "json", "go"], { server });
    const end = expectRunEnded(r, { code: 1, stopReason: "error" });
    expect(end.error).toContain("Incorrect API key provided");
    expect(JSON.parse(r.stdout).error).toContain("401");
  });

  it("--dry-run, yiem config and yiem config --json: the key and the interpolated token are redacted", async () => {
    const dry = await yiem(["run", "-c", spec, "--dry-run", "go"]);
    expect(dry.code).toBe(0);
    expectNoSecrets(dry.stdout, dry.stderr);
    const out = JSON.parse(dry.stdout);
    expect(out.spec.model.apiKey).toBe("*** (from TEST_API_KEY)");
    expect(out.request.messages[0].content).toBe("Service token: ***");
    for (const args of [["config", "-c", spec], ["config", "-c", spec, "--json"]]) {
      const r = await yiem(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("TEST_API_KEY");
      expectNoSecrets(r.stdout, r.stderr);
    }
  });

  it("a config error quoting a secret value (exit 2): not in the error, in ndjson or text", async () => {
    const bad = writeSpec(dir, "bad-secret", { model: { temperature: "${MY_SERVICE_TOKEN}" } });
    const r = await yiem(["run", "-c", bad, "go"]);
    expectRunEnded(r, { code: 2, stopReason: "error", started: false });
    for (const args of [["run", "-c", bad, "--events", "none", "go"], ["config", "-c", bad]]) {
      const other = await yiem(args);
      expect(other.code).toBe(2);
      expectNoSecrets(other.stdout, other.stderr);
    }
  });
});

describe("escape sequences from the model and tools are neutralised in pretty mode", () => {
  const ESC = "\x1b";
  const hostile = [
    `${ESC}[2J${ESC}[H`, // clear screen, cursor home
    `${ESC}]0;pwned title${ESC}\\`, // OSC window title
    `${ESC}]8;;https://evil.example${ESC}\\click${ESC}]8;;${ESC}\\`, // OSC 8 hyperlink
    `${ESC}]52;c;cm0gLXJmIH4=\x07`, // OSC 52 clipboard write
    `${ESC}[5m`, // blink (a colour code pretty never uses)
    "\x9b31m", // C1 CSI
    "\x9d0;c1 title\x07", // C1 OSC
  ].join("");
  const script = () => [
    reply.stream({
      content: `Thinking ${hostile} hard`,
      toolCalls: [call("e", "echo", { text: `tool says ${hostile}` }), call("u", `ghost${ESC}[31m`, {})],
    }),
    reply.error(400, `bad request ${hostile}`),
  ];

  it("NO_COLOR=1: no ESC (or C1 control) byte at all on stderr", async () => {
    server = await startChatServer(script());
    const r = await yiem(["run", "-c", spec, "--events", "pretty", "go"], { server, env: { NO_COLOR: "1", FORCE_COLOR: undefined } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("tool says");
    expect(r.stderr).toContain("bad request");
    expect(r.stderr).not.toMatch(/[\x1b\x9b\x9d\x07]/);
  });

  it("FORCE_COLOR=1: only pretty's own colour codes (SGR) are written, none of the hostile sequences", async () => {
    server = await startChatServer(script());
    const r = await yiem(["run", "-c", spec, "--events", "pretty", "go"], { server, env: { NO_COLOR: undefined, FORCE_COLOR: "1" } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("tool says");
    expect(r.stderr).not.toMatch(/[\x9b\x9d\x07]/);
    expect(r.stderr).not.toContain(`${ESC}[5m`);
    expect(r.stderr).not.toContain(`${ESC}]`);
    expect(r.stderr.replace(/\x1b\[(?:1|2|22|31|32|33|36|39)m/g, "")).not.toContain(ESC);
  });
});

describe("no prototype pollution from argument keys", () => {
  const hostileArgs = '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"prototype":{"polluted":"yes"},"label":"x"}';
  const polluted = () => ({}) as Record<string, unknown>;

  afterEach(() => {
    // If a test did pollute, undo it so later tests are not affected, then fail loudly.
    const leaked = "polluted" in Object.prototype;
    delete (Object.prototype as Record<string, unknown>).polluted;
    expect(leaked).toBe(false);
  });

  it("in the loop: the tool sees the keys as plain own data; a strict schema rejects them", async () => {
    let seen: Record<string, unknown> | undefined;
    const open = defineTool({
      name: "open",
      label: "open",
      description: "accepts anything",
      inputSchema: { type: "object", properties: { label: { type: "string", default: "none" }, count: { type: "integer", default: 1 } } },
      execute: async (_id, args: Record<string, unknown>) => {
        seen = args;
        return toolResult(JSON.stringify({ ...args }));
      },
    });
    const strict = defineTool({ ...echoTool("strict"), inputSchema: { type: "object", properties: { text: { type: "string" } }, additionalProperties: false } });
    const block = `{"tool_call": {"name": "open", "arguments": ${hostileArgs}, "__proto__": {"polluted": "yes"}}}`;
    const script = [
      { toolCalls: [{ id: "o", name: "open", arguments: hostileArgs }, { id: "s", name: "strict", arguments: hostileArgs }] },
      { content: block },
      { content: "done" },
    ];
    // The block in the text is read as a call only with text tool calls on (model.textToolCalls).
    const { result, ofType } = await runScripted(script, [open, strict], {
      provider: withTextToolCalls(createScriptedProvider(script)),
      hooks: { beforeToolCall: ({ args }) => ({ args: { ...args } }), afterToolCall: ({ result: r }) => ({ ...r }) },
    });
    expect(result.stopReason).toBe("completed");
    expect(ofType("agentEnd")).toHaveLength(1);
    expect(polluted().polluted).toBeUndefined();
    expect(Object.getPrototypeOf(seen)).toBe(Object.prototype);
    expect(Object.getOwnPropertyNames(seen).sort()).toEqual(["__proto__", "constructor", "count", "label", "prototype"]);
    expect(Object.getOwnPropertyDescriptor(seen, "__proto__")?.value).toEqual({ polluted: "yes" });
    const results = toolMessages(result.messages);
    expect(results.map((m) => [m.toolCallId, m.isError])).toEqual([["o", false], ["s", true], [expect.any(String), false]]);
    expect(textOf(results[1].content)).toMatch(/is not an allowed property/);
  });

  it("through the CLI: a TS tool and a command tool get the keys as data, and nothing is polluted", async () => {
    server = await startChatServer([
      reply.json({ toolCalls: [{ id: "p1", name: "probe", arguments: hostileArgs }, { id: "e1", name: "envdump", arguments: hostileArgs }] }),
      reply.json({ toolCalls: [{ id: "p2", name: "probe", arguments: "{}" }] }),
      reply.json({ content: "clean" }),
    ]);
    const r = await yiem(["run", "-c", spec, "go"], { server });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    const ends = Object.fromEntries(eventsOf(r, "toolExecutionEnd").map((e) => [e.toolCallId, e]));
    expect(ends.p1.result.details).toEqual({
      ownKeys: ["__proto__", "constructor", "label", "prototype"],
      plainPrototype: true,
      polluted: false,
      protoValue: { polluted: "yes" },
    });
    expect(ends.p2.result.details).toMatchObject({ ownKeys: ["label"], polluted: false });
    const toolArgs = /^YIEM_TOOL_ARGS=(.*)$/m.exec(ends.e1.result.content[0].text)![1];
    expect(JSON.parse(toolArgs)).toEqual(JSON.parse(hostileArgs));
  });
});
