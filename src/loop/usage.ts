/** Token usage arithmetic lives in ../tools/usage.ts (tool results carry usage too); re-exported for the loop. */
export { addUsage, tokenCount, zeroUsage } from "../tools/usage.js";
