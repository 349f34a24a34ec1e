/**
 * The tool policy: which tools a run may offer and call. Rules:
 * - `allow` and `deny` are name glob lists (the one syntax: ../glob-list.ts);
 * - a tool is allowed when some allow glob matches and no deny glob does (deny wins);
 *   an empty allow list allows nothing.
 */
import { globListMatcher } from "../glob-list.js";

/** `(name) => allowed`; defaults allow everything. */
export function createToolPolicy(allow: string[] = ["*"], deny: string[] = []): (name: string) => boolean {
  const allowed = globListMatcher(allow);
  const denied = globListMatcher(deny);
  return (name: string) => allowed(name) && !denied(name);
}
