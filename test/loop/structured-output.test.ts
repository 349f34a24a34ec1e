/**
 * Structured output in the loop, with the scripted model (in process): the final-answer tool beside the
 * run's tools and its policy, the strict-mode check, cost arithmetic, and a user message with
 * images on the wire (serialised bytes equal to the built body).
 */
import { describe, expect, it } from "vitest";
import { costOf, pricedUsage } from "../../src/loop/cost.js";
import { FINAL_ANSWER_TOOL, strictSchemaProblem } from "../../src/loop/structured-output.js";
import { buildRequestBody, serializeRequestBody } from "../../src/provider/wire.js";
import { defaultToolRegistry } from "../../src/tools/registry.js";
import type { ChatMessage } from "../../src/provider/types.js";
import { echoTool, runScripted } from "../support/loop.js";

const SCHEMA = { type: "object", properties: { n: { type: "integer" } }, required: ["n"], additionalProperties: false };

describe("structured output in the loop", () => {
  it("finalAnswer is offered even when the policy allows nothing else, and is never added to the shared registry", async () => {
    const { result, provider } = await runScripted(
      [{ toolCalls: [{ name: FINAL_ANSWER_TOOL, arguments: { n: "3" } }] }],
      [echoTool()],
      { isToolAllowed: () => false, output: { schema: SCHEMA } },
    );
    expect(provider.requests[0].tools.map((t) => t.name)).toEqual([FINAL_ANSWER_TOOL]);
    // Validated like every tool call: the string "3" coerced to the integer the schema asks for.
    expect(result.structured).toEqual({ n: 3 });
    expect(result.text).toBe('{"n":3}');
    expect(result.stopReason).toBe("terminated");
    expect(defaultToolRegistry.has(FINAL_ANSWER_TOOL)).toBe(false);
  });

  it("a final answer next to another call ends the run after the batch, the other call still runs", async () => {
    const { result, ofType } = await runScripted(
      [{ toolCalls: [{ name: "echo", arguments: { text: "a" } }, { name: FINAL_ANSWER_TOOL, arguments: { n: 1 } }] }],
      [echoTool()],
      { output: { schema: SCHEMA } },
    );
    expect(ofType("toolExecutionEnd").map((e) => e.toolName)).toEqual(["echo", FINAL_ANSWER_TOOL]);
    expect(result.structured).toEqual({ n: 1 });
  });

  it("without output nothing changes: no structured key, no finalAnswer tool", async () => {
    const { result, provider } = await runScripted([{ content: "hi" }], [echoTool()]);
    expect("structured" in result).toBe(false);
    expect(provider.requests[0].tools.map((t) => t.name)).toEqual(["echo"]);
  });

  it("native mode puts the response format on every request", async () => {
    const { result, provider } = await runScripted([{ content: "{\"n\": 1.5}" }, { content: "{\"n\": 2}" }], [], { output: { schema: SCHEMA, mode: "native", retries: 1 } });
    expect(provider.requests.map((r) => r.responseFormat?.strict)).toEqual([true, true]);
    expect(result.structured).toEqual({ n: 2 });
  });
});

describe("strictSchemaProblem (OpenAI's strict subset)", () => {
  it("accepts a closed object with every property required, and names the first break otherwise", () => {
    expect(strictSchemaProblem(SCHEMA)).toBeNull();
    expect(strictSchemaProblem({ ...SCHEMA, additionalProperties: undefined })).toMatch(/additionalProperties: false/);
    expect(strictSchemaProblem({ ...SCHEMA, required: [] })).toMatch(/\(root\)\.n is not required/);
    expect(strictSchemaProblem({ type: "array", items: { type: "string" } })).toMatch(/root is not an object/);
    expect(strictSchemaProblem({ type: "object", properties: { m: { type: "object" } }, required: ["m"], additionalProperties: false })).toMatch(/without properties/);
    expect(strictSchemaProblem({ type: "object", properties: { any: {} }, required: ["any"], additionalProperties: false })).toMatch(/has no type/);
  });
});

describe("cost arithmetic", () => {
  it("prices cached prompt tokens apart, defaults their price to the input price, and rounds float noise away", () => {
    const usage = { promptTokens: 1000, completionTokens: 100, totalTokens: 1100, cachedPromptTokens: 400 };
    expect(costOf(usage, { inputPerMTok: 2.5, outputPerMTok: 10, cachedInputPerMTok: 1.25 })).toBe(0.003);
    expect(costOf(usage, { inputPerMTok: 2.5, outputPerMTok: 10 })).toBe(0.0035);
    expect(costOf({ promptTokens: 1, completionTokens: 2, totalTokens: 3 }, { inputPerMTok: 0.1, outputPerMTok: 0.1 })).toBe(3e-7);
    expect(pricedUsage(usage, undefined)).toBe(usage);
  });
});

describe("a user message with images on the wire", () => {
  it("is text then image_url parts, and the serialised bytes equal the built body", () => {
    const messages: ChatMessage[] = [
      { role: "system", content: "s" },
      { role: "user", content: "look", images: [{ type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" }] },
    ];
    const body = buildRequestBody({ model: "m", stream: false }, messages, []);
    expect(body.messages[1]).toEqual({ role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }] });
    expect(serializeRequestBody({ model: "m", stream: false }, messages, [])).toBe(JSON.stringify(body));
    // The cached conversion notices images added in place.
    (messages[1] as { images?: unknown[] }).images = [];
    expect(serializeRequestBody({ model: "m", stream: false }, messages, [])).toBe(JSON.stringify(buildRequestBody({ model: "m", stream: false }, messages, [])));
  });
});
