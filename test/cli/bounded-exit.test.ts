/**
 * The exit bound's questions (src/cli/bounded-exit.ts, src/exit-listeners.ts): are the events
 * taken with only ticks and microtasks run (`settlesAtOnce`), is any 'exit' listener not yiem's
 * (`foreignExitListeners`), was what process.exit calls replaced (`exitPathReplaced`)? Any answer
 * but "yes, no, no" starts the watch thread.
 */
import { afterEach, describe, expect, it } from "vitest";
import { settlesAtOnce } from "../../src/cli/bounded-exit.js";
import { EventEmitter } from "node:events";
import { exitPathReplaced, foreignExitListeners, onProcessExit, runOwnExitListeners } from "../../src/exit-listeners.js";

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
    // A run-once 'exit' listener emits 'removeListener' as it runs: a listener of that runs too.
    const onRemove = () => {};
    process.on("removeListener", onRemove);
    added.push(() => process.removeListener("removeListener", onRemove));
    expect(foreignExitListeners()).toBe(before + 2);
  });

  it("runOwnExitListeners runs yiem's listeners in order, past one that throws, and no other", () => {
    const ran: string[] = [];
    added.push(onProcessExit(() => ran.push("first")));
    added.push(
      onProcessExit(() => {
        ran.push("throws");
        throw new Error("listener failed");
      }),
    );
    added.push(onProcessExit(() => ran.push("last")));
    const foreign = () => ran.push("foreign");
    process.on("exit", foreign);
    added.push(() => process.removeListener("exit", foreign));
    runOwnExitListeners();
    expect(ran).toEqual(["first", "throws", "last"]);
  });

  it("removes a listener of yiem's with the function it returned, and runs each once", () => {
    let runs = 0;
    const listener = () => runs++;
    const before = process.rawListeners("exit").length;
    const remove = onProcessExit(listener);
    // Its run-once wrapper is what the process holds (emitting 'exit' here would run the test
    // runner's own listeners too).
    const raw = process.rawListeners("exit");
    expect(raw).toHaveLength(before + 1);
    const wrapper = raw[raw.length - 1] as () => void;
    wrapper();
    wrapper();
    expect(runs).toBe(1);
    expect(process.rawListeners("exit")).toHaveLength(before);
    const again = onProcessExit(listener);
    expect(process.rawListeners("exit")).toHaveLength(before + 1);
    again();
    remove();
    expect(process.rawListeners("exit")).toHaveLength(before);
    expect(runs).toBe(1);
  });

  it("reads no .listener property: a foreign listener that names one of yiem's as its listener still counts", () => {
    const before = foreignExitListeners();
    added.push(onProcessExit(() => {}));
    const mine = process.rawListeners("exit").at(-1);
    const foreign = Object.assign(() => {}, { listener: mine });
    process.on("exit", foreign);
    added.push(() => process.removeListener("exit", foreign));
    expect(foreignExitListeners()).toBe(before + 1);
  });
});

describe("exitPathReplaced", () => {
  const restore: Array<() => void> = [];
  afterEach(() => {
    for (const undo of restore.splice(0)) undo();
  });

  /** Replaces `name` of `target` by its own property for the test, restored afterwards. */
  function replace(target: object, name: string, descriptor: PropertyDescriptor): void {
    const before = Object.getOwnPropertyDescriptor(target, name);
    Object.defineProperty(target, name, { configurable: true, ...descriptor });
    restore.push(() => {
      if (before) Object.defineProperty(target, name, before);
      else delete (target as Record<string, unknown>)[name];
    });
  }

  it("is false as loaded", () => {
    expect(exitPathReplaced()).toBe(false);
  });

  const cases: Array<[string, () => void]> = [
    ["process.emit (own property)", () => replace(process, "emit", { writable: true, value: () => false })],
    ["EventEmitter.prototype.emit", () => replace(EventEmitter.prototype, "emit", { writable: true, value: () => false })],
    ["process.reallyExit", () => replace(process, "reallyExit", { writable: true, value: () => {} })],
    ["process.removeListener", () => replace(process, "removeListener", { writable: true, value: () => process })],
    ["process.off on the prototype", () => replace(EventEmitter.prototype, "off", { writable: true, value: () => process })],
    ["process._exiting as a getter", () => replace(process, "_exiting", { get: () => false })],
  ];
  for (const [what, apply] of cases) {
    it(`is true when ${what} was replaced, without calling a getter`, () => {
      apply();
      expect(exitPathReplaced()).toBe(true);
      for (const undo of restore.splice(0)) undo();
      expect(exitPathReplaced()).toBe(false);
    });
  }

  it("is true when the process's prototype chain was changed", () => {
    const proto = Object.getPrototypeOf(process) as object;
    Object.setPrototypeOf(process, Object.create(proto));
    restore.push(() => Object.setPrototypeOf(process, proto));
    expect(exitPathReplaced()).toBe(true);
  });

  it("calls no proxy trap: a proxy on the prototype chain counts as replaced", () => {
    const proto = Object.getPrototypeOf(process) as object;
    let traps = 0;
    const proxy = new Proxy(proto, {
      getOwnPropertyDescriptor(target, key) {
        traps++;
        return Reflect.getOwnPropertyDescriptor(target, key);
      },
    });
    Object.setPrototypeOf(process, proxy);
    restore.push(() => Object.setPrototypeOf(process, proto));
    expect(exitPathReplaced()).toBe(true);
    expect(traps).toBe(0);
  });

  it("reads descriptors only: a getter put on the path is never called", () => {
    let calls = 0;
    replace(process, "emit", {
      get: () => {
        calls++;
        return EventEmitter.prototype.emit;
      },
    });
    expect(exitPathReplaced()).toBe(true);
    expect(calls).toBe(0);
  });
});
