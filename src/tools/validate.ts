/**
 * JSON Schema validation of tool arguments with ajv: all errors, formats, defaults applied,
 * scalar coercion. A tool's validator is compiled on its first call and cached per schema object.
 * Run-time compiles skip checking the schema against the JSON Schema meta-schema (that costs
 * ~30 ms per process); `checkSchema` does that check, and `yiem tools check` and the tool
 * generator use it. `inputSchemaProblem` is the load-time check (src/tools/schema-check.ts).
 */
import type { JsonSchema } from "./types.js";
import { newAjv } from "../ajv.js";

type AjvValidate = ((data: unknown) => boolean) & {
  errors?: Array<{ instancePath: string; message?: string; params?: Record<string, unknown>; keyword: string }> | null;
};
type AjvLike = {
  compile(schema: object): AjvValidate;
  validateSchema(schema: object): boolean;
  errors?: AjvValidate["errors"];
  errorsText(errors?: AjvValidate["errors"], options?: { dataVar?: string }): string;
};

const ajvInstances = new Map<boolean, Promise<AjvLike>>();
const validators = new WeakMap<object, AjvValidate>();

/** The argument validator's ajv; `metaCheck` also checks each schema against the meta-schema. */
async function getAjv(metaCheck: boolean): Promise<AjvLike> {
  let instance = ajvInstances.get(metaCheck);
  if (!instance) {
    instance = (async () =>
      newAjv({ allErrors: true, useDefaults: true, coerceTypes: true, strict: false, validateSchema: metaCheck }, { formats: true }) as unknown as AjvLike)();
    ajvInstances.set(metaCheck, instance);
  }
  return instance;
}

/**
 * Starts loading the argument validator's ajv without waiting for it (a failure is left for the
 * first validation to report). For a caller with idle time to spare, e.g. while a model request
 * is in flight, so the first tool call does not pay for loading ajv.
 */
export function preloadValidator(): void {
  getAjv(false).catch(() => {});
}

/** Throws with ajv's message when `schema` is not a valid JSON Schema (meta-schema included). */
export async function checkSchema(schema: JsonSchema): Promise<void> {
  (await getAjv(true)).compile(schema);
}

/**
 * Why `schema` cannot be used as a tool's input schema, or null when it can: checked against the
 * JSON Schema meta-schema, then compiled by the very ajv that validates arguments (the validator is
 * kept, so the first call does not compile it again).
 */
export async function inputSchemaProblem(schema: JsonSchema): Promise<string | null> {
  const ajv = await getAjv(false);
  try {
    if (!ajv.validateSchema(schema)) return ajv.errorsText(ajv.errors, { dataVar: "schema" });
    await compileSchema(schema);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Compiles (once) the validator for `schema`; throws with ajv's message when ajv cannot compile it. */
export async function compileSchema(schema: JsonSchema): Promise<AjvValidate> {
  const cached = validators.get(schema);
  if (cached) return cached;
  const validate = (await getAjv(false)).compile(schema);
  validators.set(schema, validate);
  return validate;
}

/**
 * Validates `args` in place (defaults and coercion change it). Returns one line per failing
 * field, or an empty list when the arguments are valid.
 */
export async function validateAgainstSchema(schema: JsonSchema, args: Record<string, unknown>): Promise<string[]> {
  const validate = await compileSchema(schema);
  if (validate(args)) return [];
  return (validate.errors ?? []).map((e) => {
    const path = e.instancePath ? e.instancePath.slice(1).replaceAll("/", ".") : "";
    if (e.keyword === "required" && e.params?.missingProperty !== undefined) {
      const field = [path, String(e.params.missingProperty)].filter(Boolean).join(".");
      return `${field}: is required`;
    }
    if (e.keyword === "additionalProperties" && e.params?.additionalProperty !== undefined) {
      const field = [path, String(e.params.additionalProperty)].filter(Boolean).join(".");
      return `${field}: is not an allowed property`;
    }
    const detail = e.keyword === "enum" && Array.isArray(e.params?.allowedValues)
      ? ` (${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")})`
      : "";
    return `${path || "(arguments)"}: ${e.message ?? e.keyword}${detail}`;
  });
}
