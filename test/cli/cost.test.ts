/**
 * Through the CLI (in-process): spec `model.pricing` puts `costUsd` on every usage object
 * of the events and the result (cached prompt tokens at their own price when the server reports
 * them), and `limits.maxCostUsd` / `--budget-usd` stop a run as the token budget does (stopReason
 * budget, exit 3). Without pricing nothing is priced.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, type CliResult } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

const SHOUT = `import { defineTool, toolResult } from "yiem";
export default defineTool({
  name: "shout", label: "Shout", description: "Upper-cases a text",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  async execute(_id, args) { return toolResult(String(args.text).toUpperCase()); },
});
`;

const MODEL = `model:
  name: test-model
  baseURL: \${TEST_BASE_URL}
  apiKeyEnv: TEST_API_KEY
  maxRetries: 0
  timeoutMs: 5s
`;
const PRICED = `${MODEL}  pricing: { inputPerMTok: 2.5, outputPerMTok: 10, cachedInputPerMTok: 1.25 }
toolDirs: [tools]
limits: { maxTurns: 5 }
`;

let dir: string;
let server: ChatServer | undefined;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-cost-"));
  await mkdir(join(dir, "tools"));
  await writeFile(join(dir, "tools", "shout.ts"), SHOUT);
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "cost-fixture", private: true }));
  await writeFile(join(dir, "agent.config.yaml"), PRICED);
  await writeFile(join(dir, "unpriced.yaml"), `${MODEL}toolDirs: [tools]\n`);
  await writeFile(join(dir, "no-pricing-budget.yaml"), `${MODEL}limits: { maxCostUsd: 0.5 }\n`);
});
afterAll(() => rm(dir, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function run(args: string[]): Promise<CliResult & { end: Record<string, any> }> {
  const r = await runCli(["run", ...args], { cwd: dir, env: { TEST_BASE_URL: server?.url ?? "http://127.0.0.1:9/v1", TEST_API_KEY: "sk-cost" } });
  assertEventStream(r.events, { requireStart: false });
  return Object.assign(r, { end: r.events.at(-1) as Record<string, any> });
}

/** Usage with OpenAI's cached-token detail (valid in the official schema's CompletionUsage). */
const usage = (prompt: number, completion: number, cached = 0) =>
  ({ prompt_tokens: prompt, completion_tokens: completion, ...(cached ? { prompt_tokens_details: { cached_tokens: cached } } : {}) }) as { prompt_tokens: number; completion_tokens: number };

describe("model.pricing", () => {
  it("every usage object carries costUsd; cached prompt tokens cost the cached price", async () => {
    server = await startChatServer([
      reply.stream({ toolCalls: [{ name: "shout", arguments: '{"text":"hi"}' }], usage: usage(1000, 100, 400) }),
      reply.stream({ content: "HI", usage: usage(2000, 50) }),
    ]);
    const r = await run(["--output", "json", "Shout hi"]);
    expect(r.code, r.stderr).toBe(0);
    // turn 1: 600 × 2.5 + 400 × 1.25 + 100 × 10 = 3000 per million → 0.003
    // turn 2: 2000 × 2.5 + 50 × 10 = 5500 per million → 0.0055
    const ends = r.events.filter((e) => e.type === "messageEnd") as any[];
    expect(ends.map((e) => e.usage.costUsd)).toEqual([0.003, 0.0055]);
    expect(ends[0].usage.cachedPromptTokens).toBe(400);
    const turns = r.events.filter((e) => e.type === "turnEnd") as any[];
    expect(turns.map((e) => e.usage.costUsd)).toEqual([0.003, 0.0055]);
    expect(r.end.usage).toMatchObject({ promptTokens: 3000, completionTokens: 150, cachedPromptTokens: 400, costUsd: 0.0085 });
    expect(r.end.costUsd).toBe(0.0085);
    const json = JSON.parse(r.stdout);
    expect(json.costUsd).toBe(0.0085);
    expect(json.usage.costUsd).toBe(0.0085);
    server.assertClean();
  });

  it("without pricing no usage has costUsd and the result's costUsd is null", async () => {
    server = await startChatServer([reply.stream({ content: "ok", usage: usage(10, 5) })]);
    const r = await run(["-c", "unpriced.yaml", "--output", "json", "Hi"]);
    expect(r.code, r.stderr).toBe(0);
    for (const event of r.events) if ("usage" in event) expect(event.usage).not.toHaveProperty("costUsd");
    expect(r.end).not.toHaveProperty("costUsd");
    expect(JSON.parse(r.stdout).costUsd).toBeNull();
  });
});

describe("the cost budget", () => {
  it("--budget-usd stops the run after the response that spent it: budget, exit 3, its calls not run", async () => {
    server = await startChatServer([reply.stream({ toolCalls: [{ name: "shout", arguments: '{"text":"a"}' }], usage: usage(100_000, 1000) })]);
    // 100000 × 2.5 + 1000 × 10 = 260000 per million → $0.26 > $0.1
    const r = await run(["--budget-usd", "0.1", "Shout"]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.end.stopReason).toBe("budget");
    expect(r.end.error).toBe("cost budget exceeded: $0.26 > $0.1");
    const rejected = r.events.find((e) => e.type === "toolCallRejected") as any;
    expect(rejected.reason).toBe("Not executed: the run's cost budget is spent.");
    expect(r.events.some((e) => e.type === "toolExecutionStart")).toBe(false);
    expect(server.requests).toHaveLength(1);
    server.assertClean();
  });

  it("a final answer that spends the cost budget is still delivered", async () => {
    server = await startChatServer([reply.stream({ content: "Done.", usage: usage(100_000, 1000) })]);
    const r = await run(["--set", "limits.maxCostUsd=0.1", "Go"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("Done.\n");
  });

  it("limits.maxCostUsd without model.pricing is exit 2: yiem has no price table", async () => {
    const r = await run(["-c", "no-pricing-budget.yaml", "Hi"]);
    expect(r.code).toBe(2);
    expect(r.end.error).toMatch(/limits\.maxCostUsd.*a cost budget needs model\.pricing/);
  });

  it("--budget-usd that is not a number names the flag", async () => {
    const r = await run(["--budget-usd", "lots", "Hi"]);
    expect(r.code).toBe(2);
    expect(r.end.error).toMatch(/--budget-usd/);
  });
});
