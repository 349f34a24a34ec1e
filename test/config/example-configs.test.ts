/**
 * The example specs in configs/: each one resolves (`yiem config`), offers the tools it promises
 * (`yiem run --dry-run`), and runs offline with a replay model: the review spec with a diff on
 * stdin, the weather spec with the demo replay, and the scaffold spec writing, loading and calling
 * a new tool in a copy of its folder layout.
 */
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertEventStream, repoRoot } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

const DEMO = "replay:configs/demo.replay.jsonl";
const noKey = { OPENAI_API_KEY: undefined, YIEM_MODEL: undefined, OPENAI_BASE_URL: undefined };

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "yiem-configs-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

interface DryRun {
  spec: { configPath: string; name: string; toolExecution: string; builtinTools: string[]; writeToolDir: string | null };
  tools: string[];
  problems: unknown[];
  request: { model: string; messages: Array<{ role: string; content: string }>; tools: Array<{ function: { name: string } }> };
}

async function dryRun(config: string): Promise<DryRun> {
  const r = await runCli(["run", "--dry-run", "-c", config, "--model", DEMO, "hi"], { env: noKey });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as DryRun;
}

describe("every spec in configs/", () => {
  it("passes `yiem config -c`", async () => {
    const specs = (await readdir(join(repoRoot, "configs"))).filter((f) => /\.ya?ml$/.test(f));
    expect(specs).toEqual(expect.arrayContaining(["review.yaml", "scaffold.yaml", "weather.yaml"]));
    for (const spec of specs) {
      const r = await runCli(["config", "--json", "-c", `configs/${spec}`], { env: noKey });
      expect(r.code, `${spec}: ${r.stderr}`).toBe(0);
      const resolved = JSON.parse(r.stdout) as { configPath: string; systemPrompt: string; model: { name: string } };
      expect(resolved.configPath).toBe(join(repoRoot, "configs", spec));
      expect(resolved.systemPrompt.length, spec).toBeGreaterThan(50);
      expect(resolved.model.name, spec).not.toBe("");
    }
  });
});

describe("configs/weather.yaml", () => {
  it("offers getTime, getWeather and listTools, run in parallel", async () => {
    const d = await dryRun("configs/weather.yaml");
    expect([...d.tools].sort()).toEqual(["getTime", "getWeather", "listTools"]);
    expect(d.problems).toEqual([]);
    expect(d.spec.toolExecution).toBe("parallel");
    expect(d.request.messages.at(-1)).toEqual({ role: "user", content: "hi" });
    expect(d.request.tools.map((t) => t.function.name).sort()).toEqual(["getTime", "getWeather", "listTools"]);
  });

  it("runs the demo replay with the real getTime", async () => {
    const r = await runCli(["run", "-c", "configs/weather.yaml", "--model", DEMO, "What time is it in Tokyo?"], { env: noKey });
    expect(r.code, r.stderr.slice(-1500)).toBe(0);
    assertEventStream(r.events);
    expect(r.events[0]).toMatchObject({ type: "agentStart", toolExecution: "parallel", configPath: join(repoRoot, "configs/weather.yaml") });
    expect(r.stdout).toMatch(/Tokyo, Japan \(Asia\/Tokyo\): .+ \d{2}:\d{2}:\d{2} \(UTC\+09:00\)\n$/);
  });
});

describe("configs/review.yaml", () => {
  it("offers listTools only", async () => {
    const d = await dryRun("configs/review.yaml");
    expect(d.tools).toEqual(["listTools"]);
    expect(d.spec.builtinTools).toEqual(["listTools"]);
  });

  it("reviews a diff piped on stdin: the prompt and the diff reach the model, the review is stdout", async () => {
    const diff = [
      "diff --git a/src/server.ts b/src/server.ts",
      "--- a/src/server.ts",
      "+++ b/src/server.ts",
      "@@ -10,3 +10,3 @@ export function start() {",
      "-  const port = 3000;",
      "+  const port = process.env.PORT ? parseInt(process.env.PORT) : 3000;",
      "   server.listen(port);",
      "",
    ].join("\n");
    const session = join(tmp, "review-session.json");
    const fixture = "test/fixtures/review.replay.jsonl";
    const r = await runCli(
      ["run", "-c", "configs/review.yaml", "--model", `replay:${fixture}`, "--session", session, "Review this change"],
      { env: noKey, stdin: diff },
    );
    expect(r.code, r.stderr.slice(-1500)).toBe(0);
    assertEventStream(r.events);
    expect(r.events[0]).toMatchObject({ type: "agentStart", tools: ["listTools"] });
    const recorded = JSON.parse((await readFile(join(repoRoot, fixture), "utf8")).trim()) as { content: string };
    expect(r.stdout).toBe(`${recorded.content}\n`);

    const saved = JSON.parse(await readFile(session, "utf8")) as { messages: Array<{ role: string; content: unknown }> };
    const user = saved.messages.find((m) => m.role === "user");
    expect(user?.content).toBe(`Review this change\n\n${diff.trimEnd()}`);
  });
});

describe("configs/scaffold.yaml", () => {
  it("offers listTools and writeTool plus the tools, and writes to its own folder, not tools/", async () => {
    const d = await dryRun("configs/scaffold.yaml");
    expect(d.tools.slice(0, 2)).toEqual(["listTools", "writeTool"]);
    expect(d.tools).toEqual(expect.arrayContaining(["getTime", "getWeather"]));
    expect(d.problems).toEqual([]);
    expect(d.spec.writeToolDir).toBe(join(repoRoot, "configs/generated-tools"));
  });

  it("lets a (replayed) model check listTools, write a tool, and call it in the next turn", async () => {
    // The spec's own folder layout, in a temporary copy, so the repository is not written to.
    const root = join(tmp, "scaffold");
    await mkdir(join(root, "configs", "generated-tools"), { recursive: true });
    await mkdir(join(root, "tools"), { recursive: true });
    await copyFile(join(repoRoot, "configs/scaffold.yaml"), join(root, "configs/scaffold.yaml"));
    const draft = {
      name: "countWords",
      label: "Count words",
      description: "Counts the words of a text (runs of non-space characters).",
      inputSchema: {
        type: "object",
        properties: { text: { type: "string", description: "The text whose words to count" } },
        required: ["text"],
        additionalProperties: false,
      },
      executeCode: "const words = args.text.split(/\\s+/).filter(Boolean).length;\nreturn toolResult(`${words} words`, { details: { words } });",
    };
    const turns = [
      { content: "", toolCalls: [{ id: "c1", name: "listTools", arguments: "{}" }] },
      { content: "", toolCalls: [{ id: "c2", name: "writeTool", arguments: JSON.stringify(draft) }] },
      { content: "", toolCalls: [{ id: "c3", name: "countWords", arguments: JSON.stringify({ text: "to be or not to be" }) }] },
      { content: "countWords says: {{result:countWords}}" },
    ];
    const replay = join(root, "scaffold.replay.jsonl");
    await writeFile(replay, turns.map((t) => JSON.stringify(t)).join("\n"));

    const r = await runCli(["run", "-c", join(root, "configs/scaffold.yaml"), "--model", `replay:${replay}`, "Count the words of: to be or not to be"], {
      env: noKey,
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    assertEventStream(r.events);
    expect(r.stdout).toBe("countWords says: 6 words\n");
    const ends = r.events.filter((e) => e.type === "toolExecutionEnd") as unknown as Array<{ toolName: string; isError: boolean }>;
    expect(ends.map((e) => [e.toolName, e.isError])).toEqual([
      ["listTools", false],
      ["writeTool", false],
      ["countWords", false],
    ]);
    expect(await readdir(join(root, "configs/generated-tools"))).toEqual(["countWords.ts"]);
    expect(await readdir(join(root, "tools"))).toEqual([]);
  });
});
