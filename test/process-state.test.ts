/**
 * Test files share worker processes; what one leaves in the process is put back before the next
 * (test/support/process-state.ts, run by test/support/setup-file.ts).
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { captureProcessState, restoreProcessState } from "./support/process-state.js";

const before = captureProcessState();
afterEach(() => restoreProcessState(before));

describe("the process state a test file leaves behind is put back", () => {
  it("a replaced process.env: the real environment is reached again, so os.homedir() follows HOME", () => {
    const state = captureProcessState();
    process.env = { ...process.env };
    restoreProcessState(state);
    expect(process.env).toBe(state.env);
    const home = mkdtempSync(path.join(tmpdir(), "yiem-process-state-"));
    try {
      process.env.HOME = home;
      expect(homedir()).toBe(home);
    } finally {
      restoreProcessState(state);
      rmSync(home, { recursive: true, force: true });
    }
    expect(process.env.HOME).toBe(state.variables.HOME);
  });

  it("variables added, changed or deleted are put back; vitest's own are left as they are", () => {
    process.env.YIEM_PROCESS_STATE_KEPT = "before";
    const state = captureProcessState();
    process.env.YIEM_PROCESS_STATE_KEPT = "after";
    process.env.YIEM_PROCESS_STATE_ADDED = "leak";
    delete process.env.PATH;
    process.env.VITEST_PROCESS_STATE_OWN = "vitest";
    restoreProcessState(state);
    expect(process.env.YIEM_PROCESS_STATE_KEPT).toBe("before");
    expect(process.env.YIEM_PROCESS_STATE_ADDED).toBeUndefined();
    expect(process.env.PATH).toBe(state.variables.PATH);
    expect(process.env.VITEST_PROCESS_STATE_OWN).toBe("vitest");
    delete process.env.VITEST_PROCESS_STATE_OWN;
  });

  it("the working folder and real timers", () => {
    const state = captureProcessState();
    const folder = realpathSync(mkdtempSync(path.join(tmpdir(), "yiem-process-state-")));
    try {
      process.chdir(folder);
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(0);
      restoreProcessState(state);
      expect(process.cwd()).toBe(state.cwd);
      expect(vi.isFakeTimers()).toBe(false);
      expect(Date.now()).toBeGreaterThan(0);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
