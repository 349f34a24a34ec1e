/**
 * Many runs side by side on one registry (src/loop/run-state.ts, run-frame.ts): each run keeps
 * its own tool policy (what it is offered, what listTools lists, what it may call), its own call
 * ids, and its own event stream (one runId, gap-free seq, agentStart first, one agentEnd last).
 */
import { describe, expect, it } from "vitest";
import { runAgent } from "../../src/loop/run-agent.js";
import type { AgentEvent } from "../../src/loop/types.js";
import { createScriptedProvider } from "../../src/provider/scripted.js";
import { createBuiltinTools } from "../../src/tools/builtins/index.js";
import type { ListedTool } from "../../src/tools/builtins/listTools.js";
import { createToolPolicy } from "../../src/tools/policy.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { Tool } from "../../src/tools/types.js";

const RUNS = 50;
const NAMES = Array.from({ length: 10 }, (_, i) => `t${i}`);

function echo(name: string): Tool {
  return {
    name,
    label: name,
    description: `echoes for ${name}`,
    inputSchema: { type: "object", properties: { run: { type: "number" } }, additionalProperties: false },
    // A short wait, so the runs' calls overlap.
    execute: async (_id, args: { run: number }) => {
      await new Promise((resolve) => setTimeout(resolve, 1 + (args.run % 7)));
      return { content: [{ type: "text", text: `${name} ran for run ${args.run}` }] };
    },
  };
}

/** Run i's policy: a few allowed names, one of them denied again for odd runs (deny wins). */
function policyOf(i: number): { allow: string[]; deny: string[]; offered: string[] } {
  const picked = [...new Set([i % 10, (i * 3 + 1) % 10, (i * 7 + 2) % 10])].sort((a, b) => a - b).map((n) => `t${n}`);
  const deny = i % 2 === 1 ? [picked[0]] : [];
  const allow = i % 5 === 0 ? ["listTools", picked.join(",")] : ["listTools", ...picked];
  const offered = ["listTools", ...picked.filter((name) => !deny.includes(name))];
  return { allow, deny, offered };
}

describe("50 concurrent runs on one registry", () => {
  it("each sees exactly its own tools in listTools and in its requests, and its own events", async () => {
    const registry = new ToolRegistry();
    for (const tool of createBuiltinTools(["listTools"], { registry, writeToolDir: null })) registry.register(tool, { kind: "builtin" });
    for (const name of NAMES) registry.register(echo(name));

    const runs = Array.from({ length: RUNS }, (_, i) => {
      const policy = policyOf(i);
      const allowedTool = policy.offered[1];
      const deniedTool = NAMES.find((name) => !policy.offered.includes(name))!;
      const provider = createScriptedProvider([
        {
          delayMs: (i * 13) % 17,
          // Ids left out: the run makes its own.
          toolCalls: [
            { id: "", name: "listTools", arguments: {} },
            { id: "", name: allowedTool, arguments: { run: i } },
            { id: "", name: deniedTool, arguments: { run: i } },
          ],
        },
        { delayMs: (i * 7) % 11, content: `done ${i}` },
      ]);
      const events: AgentEvent[] = [];
      const promise = runAgent({
        provider,
        registry,
        messages: [{ role: "user", content: `run ${i}` }],
        toolExecution: i % 2 === 0 ? "parallel" : "sequential",
        isToolAllowed: createToolPolicy(policy.allow, policy.deny),
        runId: `run-${String(i).padStart(3, "0")}-${"x".repeat(8)}`,
        onEvent: (event) => events.push(event),
      });
      return { i, policy, allowedTool, deniedTool, provider, events, promise };
    });
    const results = await Promise.all(runs.map((run) => run.promise));

    for (const [index, run] of runs.entries()) {
      const result = results[index];
      const { events, policy } = run;
      expect(result.stopReason).toBe("completed");
      expect(result.text).toBe(`done ${run.i}`);

      // Its own stream: one runId, seq 1…n, agentStart first, one agentEnd last.
      expect(new Set(events.map((e) => e.runId))).toEqual(new Set([result.runId]));
      expect(events.map((e) => e.seq)).toEqual(events.map((_, k) => k + 1));
      expect(events[0].type).toBe("agentStart");
      expect(events.filter((e) => e.type === "agentEnd")).toHaveLength(1);
      expect(events.at(-1)).toMatchObject({ type: "agentEnd", stopReason: "completed", turns: 2, toolCalls: 3 });

      // Its own tools: offered, listed, callable.
      expect(events[0]).toMatchObject({ tools: policy.offered });
      for (const request of run.provider.requests) expect(request.tools.map((t) => t.name)).toEqual(policy.offered);
      const ends = events.filter((e): e is Extract<AgentEvent, { type: "toolExecutionEnd" }> => e.type === "toolExecutionEnd");
      const listed = ends.find((e) => e.toolName === "listTools")!.result.details as ListedTool[];
      expect(listed.map((t) => t.name)).toEqual(policy.offered);
      expect(ends.find((e) => e.toolName === run.allowedTool)!.result.content).toEqual([{ type: "text", text: `${run.allowedTool} ran for run ${run.i}` }]);
      const rejected = events.filter((e) => e.type === "toolCallRejected");
      expect(rejected).toEqual([expect.objectContaining({ toolName: run.deniedTool })]);

      // Its own call ids, counted in this run only.
      const prefix = result.runId.slice(0, 8);
      const ids = events.flatMap((e) => (e.type === "messageEnd" ? e.message.toolCalls.map((c) => c.id) : []));
      expect(ids).toEqual([`call_${prefix}_1`, `call_${prefix}_2`, `call_${prefix}_3`]);
    }
    // Nothing of any run stayed on the registry: it offers every tool.
    expect(registry.offered().map((t) => t.name)).toEqual(["listTools", ...NAMES]);
  });
});
