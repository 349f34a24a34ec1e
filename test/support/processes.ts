/** Process checks for tests that must leave no child behind: Linux /proc scans by process group. */
import { readdirSync, readFileSync } from "node:fs";
import { expect, vi } from "vitest";

/** Live (non-zombie) processes of process group `pgid`, from /proc. */
export function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const state = procState(Number(entry));
    if (state && state.pgrp === pgid && state.state !== "Z" && state.state !== "X") members.push(Number(entry));
  }
  return members;
}

export function isAlive(pid: number): boolean {
  const state = procState(pid);
  return state !== null && state.state !== "Z" && state.state !== "X";
}

function procState(pid: number): { state: string; pgrp: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state, pgrp: Number(pgrp) };
  } catch {
    return null;
  }
}

/** The pid a `family` tool reported in a toolExecutionUpdate (`main 123` / `grandchild 456`). */
export function reportedPid(stderr: string, label: "main" | "grandchild"): number {
  const match = new RegExp(`"text":"${label} (\\d+)"`).exec(stderr);
  return match ? Number(match[1]) : 0;
}

/** SIGKILLs whatever is left of a group (so a failing test leaves nothing behind). */
export function reap(pgid: number): void {
  if (pgid > 0) for (const pid of groupMembers(pgid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/**
 * A process group's leader `main` (also its pgid) and a `grandchild` it started are both gone and
 * the group is empty, within a few seconds; whatever is left is SIGKILLed in any case.
 */
export async function expectGroupGone(main: number, grandchild: number): Promise<void> {
  expect(main).toBeGreaterThan(0);
  expect(grandchild).toBeGreaterThan(0);
  try {
    await vi.waitFor(() => {
      expect(groupMembers(main)).toEqual([]);
      expect(isAlive(main)).toBe(false);
      expect(isAlive(grandchild)).toBe(false);
    }, { timeout: 3000, interval: 20 });
  } finally {
    reap(main);
  }
}
