/**
 * The ajv options the spec is checked with (./validate.ts), one home for both places that compile
 * schema/agent.schema.json: at run time, and at build time (scripts/spec-validator.mjs writes
 * dist/bundle/vendor/spec-validator.cjs, ajv's standalone code of the same schema with the same
 * options, so a cold start does not compile the schema).
 */
export const SPEC_AJV_OPTIONS = { allErrors: true, verbose: true, allowUnionTypes: true } as const;

