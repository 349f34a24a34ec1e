/** Resolve hook of trace-modules.mjs: logs each resolved ES module URL. Runs on the hooks thread. */
import { appendFileSync } from "node:fs";

let out;

export function initialize(data) {
  out = data.out;
}

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(out, `esm ${result.url}\n`);
  return result;
}
