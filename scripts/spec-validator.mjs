/**
 * The spec's validator compiled at build time (scripts/bundle.mjs bundles it as
 * dist/bundle/vendor/spec-validator.cjs; src/config/validate.ts uses it). Rules:
 * - it is ajv's standalone code of schema/agent.schema.json, compiled with the options the run
 *   time uses (src/config/spec-ajv-options.ts, read from tsc's dist/, built before this step);
 * - it carries the schema file's checksum (src/checksum.ts) as `schemaChecksum`: the run time uses
 *   it only for the schema text it reads itself, so a schema edited after the build is compiled
 *   at run time instead.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const requireFromRoot = createRequire(`${root}package.json`);

/** The validator module's source: CommonJS, `module.exports` the validate function (with `schemaChecksum`). */
export async function specValidatorSource() {
  const { SPEC_AJV_OPTIONS } = await import(`${root}dist/config/spec-ajv-options.js`);
  const { checksum } = await import(`${root}dist/checksum.js`);
  const Ajv = requireFromRoot("ajv").default;
  const standalone = requireFromRoot("ajv/dist/standalone").default;
  const schema = readFileSync(`${root}schema/agent.schema.json`);
  const ajv = new Ajv({ ...SPEC_AJV_OPTIONS, code: { source: true } });
  const code = standalone(ajv, ajv.compile(JSON.parse(schema.toString("utf8"))));
  return `${code}\nmodule.exports.schemaChecksum = ${JSON.stringify(checksum(schema))};\n`;
}
