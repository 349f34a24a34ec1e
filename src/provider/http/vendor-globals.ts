/**
 * The globals the openai vendor bundle gets in place of Node's own (scripts/bundle.mjs, esbuild's
 * `inject`): its `new Headers()` and `instanceof Headers` use ./headers.ts, so a request made
 * through the model client's `fetch` (./node-fetch.ts) never loads Node's fetch implementation.
 * Source files (vitest, `tsc` output) use the package from node_modules with the real globals.
 */
export { FetchHeaders as Headers } from "./headers.js";
