/**
 * ajv, loaded one way for every validator (the spec's, tool arguments', tool schemas'): through
 * this package's `require` on first use (a CommonJS package: see require-cjs.ts), never at
 * start-up. `formats` adds ajv-formats (`date-time`, `email`, …).
 */
import type { Options } from "ajv";

type Ajv = InstanceType<typeof import("ajv").default>;
import { requireCjs } from "./require-cjs.js";

export function newAjv(options: Options, extras: { formats?: boolean } = {}): Ajv {
  const AjvClass = (requireCjs("ajv") as typeof import("ajv")).default;
  const ajv = new AjvClass(options);
  if (extras.formats) (requireCjs("ajv-formats") as typeof import("ajv-formats")).default(ajv);
  return ajv;
}
