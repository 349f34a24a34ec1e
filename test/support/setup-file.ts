/**
 * vitest.config.ts `setupFiles`: evaluated before every test file. Test files share worker
 * processes, so each file starts from, and leaves, the process state the worker started with
 * (./process-state.ts): restored before the file (state a previous file's leftover work changed
 * after it ended) and after all of its own hooks (this file's `afterAll` is registered first, so
 * it runs last).
 */
import { afterAll } from "vitest";
import { captureProcessState, restoreProcessState, type ProcessState } from "./process-state.js";

const KEY = Symbol.for("yiem.test.processState");
const store = globalThis as { [KEY]?: ProcessState };
const state = (store[KEY] ??= captureProcessState());

restoreProcessState(state);
afterAll(() => restoreProcessState(state));
