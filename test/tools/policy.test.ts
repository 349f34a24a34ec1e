/** The allow/deny tool policy: deny over allow, and how the loop applies it (the glob syntax: test/glob-list.test.ts). */
import { describe, expect, it } from "vitest";
import { createToolPolicy } from "../../src/tools/policy.js";
import { defineTool, textContent } from "../../src/tools/define.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { runAgent } from "../../src/loop/run-agent.js";
import { createScriptedProvider } from "../../src/provider/scripted.js";
import type { AgentEvent } from "../../src/loop/types.js";

describe("createToolPolicy", () => {
  it("allows everything by default", () => {
    const allowed = createToolPolicy();
    expect(["a", "writeTool", "x-y_z"].every(allowed)).toBe(true);
  });

  it("deny wins over allow", () => {
    const allowed = createToolPolicy(["*"], ["write*", "delete?ile"]);
    expect(allowed("writeTool")).toBe(false);
    expect(allowed("deleteFile")).toBe(false);
    expect(allowed("readFile")).toBe(true);
    expect(createToolPolicy(["writeTool"], ["writeTool"])("writeTool")).toBe(false);
  });

  it("an allow list admits only matching names", () => {
    const allowed = createToolPolicy(["get*", "listTools"]);
    expect(allowed("getTime")).toBe(true);
    expect(allowed("listTools")).toBe(true);
    expect(allowed("writeTool")).toBe(false);
  });

  it("accepts comma-separated entries and ignores blanks", () => {
    const allowed = createToolPolicy(["getTime, getWeather", ""], [" getWeather "]);
    expect(allowed("getTime")).toBe(true);
    expect(allowed("getWeather")).toBe(false);
    expect(allowed("other")).toBe(false);
  });

  it("an empty allow list allows nothing", () => {
    expect(createToolPolicy([])("anything")).toBe(false);
  });
});

describe("the policy in the loop", () => {
  it("never offers a denied tool and rejects a call to it with toolCallRejected", async () => {
    const ran: string[] = [];
    const registry = new ToolRegistry();
    for (const name of ["readFile", "deleteFile", "listTools"]) {
      registry.register(defineTool({
        name, label: name, description: name, inputSchema: { type: "object" },
        execute: () => {
          ran.push(name);
          return { content: [textContent(`${name} ok`)] };
        },
      }));
    }
    const provider = createScriptedProvider([
      { toolCalls: [{ name: "deleteFile", arguments: {} }, { name: "readFile", arguments: {} }] },
      { content: "done" },
    ]);
    const events: AgentEvent[] = [];
    const result = await runAgent({
      provider, registry, messages: [{ role: "user", content: "go" }],
      isToolAllowed: createToolPolicy(["*"], ["delete*"]),
      onEvent: (e) => events.push(e),
    });
    expect(result.stopReason).toBe("completed");
    expect(provider.requests.map((r) => r.tools.map((t) => t.name))).toEqual([["readFile", "listTools"], ["readFile", "listTools"]]);
    expect(events.find((e) => e.type === "agentStart")).toMatchObject({ tools: ["readFile", "listTools"] });
    const rejected = events.filter((e) => e.type === "toolCallRejected");
    expect(rejected).toHaveLength(1);
    // A denied tool answers exactly as a name that does not exist.
    expect(rejected[0]).toMatchObject({ toolName: "deleteFile", reason: 'Unknown tool "deleteFile". Available tools: readFile, listTools.' });
    expect(events.filter((e) => e.type === "toolExecutionStart").map((e) => (e as { toolName: string }).toolName)).toEqual(["readFile"]);
    expect(ran).toEqual(["readFile"]);
    const toolMessages = provider.requests[1].messages.filter((m) => m.role === "tool");
    expect(toolMessages.map((m) => (m as { isError: boolean }).isError)).toEqual([true, false]);
  });
});
