/** Atomic writes live in ../atomic-write.ts (the shared base); this path is kept for tool-side callers. */
export { writeFileAtomic } from "../atomic-write.js";
