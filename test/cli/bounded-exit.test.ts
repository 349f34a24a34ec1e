/**
 * The exit bound's two questions (src/cli/bounded-exit.ts, src/exit-listeners.ts): are the events
 * taken with only ticks and microtasks run (`settlesAtOnce`), and is any 'exit' listener not
 * yiem's (`foreignExitListeners`)? Either "no" starts the watch thread.
 */
import { afterEach, describe, expect, it } from "vitest";
import { settlesAtOnce } from "../../src/cli/bounded-exit.js";
import { foreignExitListeners, onProcessExit } from "../../src/exit-listeners.js";

describe("settlesAtOnce", () => {
  it("is true for a settled promise, one settled on the next tick (a direct write's callback) and a rejected one", async () => {
    expect(await settlesAtOnce(Promise.resolve())).toBe(true);
    expect(await settlesAtOnce(new Promise<void>((resolve) => process.nextTick(resolve)))).toBe(true);
    expect(await settlesAtOnce(new Promise<void>((resolve) => process.nextTick(() => Promise.resolve().then(resolve))))).toBe(true);
    expect(await settlesAtOnce(Promise.reject(new Error("stream failed")))).toBe(true);
  });

  it("is false for a promise that waits for the event loop (a stream's write callback, a timer) or forever", async () => {
    expect(await settlesAtOnce(new Promise<void>((resolve) => setImmediate(resolve)))).toBe(false);
    expect(await settlesAtOnce(new Promise<void>((resolve) => setTimeout(resolve, 0)))).toBe(false);
    expect(await settlesAtOnce(new Promise<void>(() => {}))).toBe(false);
  });
});

describe("foreignExitListeners", () => {
  const added: Array<() => void> = [];
  afterEach(() => {
    for (const remove of added.splice(0)) remove();
  });

  it("counts the process's 'exit' listeners that were not added as yiem's", () => {
    const before = foreignExitListeners();
    added.push(onProcessExit(() => {}));
    expect(foreignExitListeners()).toBe(before);
    const foreign = () => {};
    process.on("exit", foreign);
    added.push(() => process.removeListener("exit", foreign));
    expect(foreignExitListeners()).toBe(before + 1);
  });

  it("removes a listener of yiem's with the function it returned, and runs each once", () => {
    let runs = 0;
    const listener = () => runs++;
    onProcessExit(listener);
    // The once-wrapper Node keeps for it (calling it as 'exit' would; emitting 'exit' here would
    // run the test runner's own listeners too).
    const wrapper = process.rawListeners("exit").find((raw) => (raw as { listener?: unknown }).listener === listener) as (() => void) | undefined;
    expect(wrapper).toBeDefined();
    wrapper!();
    expect(runs).toBe(1);
    expect(process.listeners("exit")).not.toContain(listener);
    const remove = onProcessExit(listener);
    expect(process.listeners("exit")).toContain(listener);
    remove();
    expect(process.listeners("exit")).not.toContain(listener);
  });
});
