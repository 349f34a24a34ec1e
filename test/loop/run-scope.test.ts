/**
 * The run scope (src/loop/run-scope.ts): the caller's signal and the run timeout as one signal,
 * the stop reason carried by the abort reason; runAgent runs under a scope its caller opened.
 */
import { describe, expect, it } from "vitest";
import { RunStop } from "../../src/loop/abort.js";
import { openRunScope } from "../../src/loop/run-scope.js";
import { runAgent } from "../../src/loop/run-agent.js";
import { createScriptedProvider } from "../../src/provider/scripted.js";
import { ToolRegistry } from "../../src/tools/registry.js";

const waitAbort = (signal: AbortSignal) => new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));

describe("openRunScope", () => {
  it("the deadline aborts with a timeout RunStop naming the limit", async () => {
    const scope = openRunScope({ timeoutMs: 20 });
    expect(scope.deadlineAt).toBeGreaterThan(Date.now() - 1);
    expect(scope.stop()).toBeUndefined();
    await waitAbort(scope.signal);
    expect(scope.signal.reason).toBeInstanceOf(RunStop);
    expect(scope.stop()).toEqual({ stopReason: "timeout", message: "run timed out after 20 ms" });
  });

  it("the caller's abort wins over a later deadline and keeps its own reason", async () => {
    const caller = new AbortController();
    const scope = openRunScope({ signal: caller.signal, timeoutMs: 30 });
    caller.abort(new RunStop("error", "the event loop ran dry"));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(scope.stop()).toEqual({ stopReason: "error", message: "the event loop ran dry" });
    const plain = new AbortController();
    const other = openRunScope({ signal: plain.signal });
    plain.abort(new Error("whatever"));
    expect(other.stop()).toEqual({ stopReason: "aborted", message: "run aborted" });
  });

  it("dispose() ends the deadline: the signal never aborts", async () => {
    const scope = openRunScope({ timeoutMs: 10 });
    scope.dispose();
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(scope.signal.aborted).toBe(false);
  });
});

describe("runAgent under a scope its caller opened", () => {
  it("ends timeout when the caller's deadline passed during the caller's own preparation", async () => {
    const scope = openRunScope({ timeoutMs: 10 });
    await waitAbort(scope.signal);
    const provider = createScriptedProvider([{ content: "never" }]);
    // limits.runTimeoutMs is the scope's business now: this larger one is not used.
    const result = await runAgent({ provider, registry: new ToolRegistry(), messages: [{ role: "user", content: "hi" }], scope, limits: { runTimeoutMs: 60_000 } });
    expect(result).toMatchObject({ stopReason: "timeout", error: "run timed out after 10 ms", turns: 0 });
    expect(provider.requests).toHaveLength(0);
  });

  it("the scope's signal reaches the provider and ends the run as its reason says", async () => {
    const controller = new AbortController();
    const scope = openRunScope({ signal: controller.signal });
    let seen: AbortSignal | undefined;
    const provider = createScriptedProvider([(request) => {
      seen = request.signal;
      setTimeout(() => controller.abort(new RunStop("timeout", "the caller's deadline")), 5);
      return { content: "late", delayMs: 1000 };
    }]);
    const result = await runAgent({ provider, registry: new ToolRegistry(), messages: [{ role: "user", content: "hi" }], scope });
    expect(seen).toBe(scope.signal);
    expect(result).toMatchObject({ stopReason: "timeout", error: "the caller's deadline" });
  });
});
