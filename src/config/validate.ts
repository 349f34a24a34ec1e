/**
 * Checking a spec against schema/agent.schema.json. Rules:
 * - the validator is made on first use, once per process: in the bundle, the one compiled at build
 *   time (dist/bundle/vendor/spec-validator.cjs, ajv's standalone code with ./spec-ajv-options.ts),
 *   when it was made from this very schema text (its checksum); else (the sources, tsc's dist/, a
 *   schema edited since the build) ajv compiles the schema here, ~100 ms of a cold start;
 * - every error is reported, one per key, each naming the file, line, key and what was expected;
 *   an unknown key names the nearest known one (../nearest-name.ts).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../package-info.js";
import type { ErrorObject, ValidateFunction } from "ajv";
import { nearestName } from "../nearest-name.js";
import { ConfigError, fileError as locatedError, showValue } from "./errors.js";
import type { ParsedSpecFile } from "./parse.js";
import type { SpecPath } from "../interpolate.js";
import { knownValid, storeValid } from "./spec-cache.js";
import { processCacheScope, type CacheScope } from "../cache-dir.js";
import { newAjv } from "../ajv.js";
import { requireCjs } from "../require-cjs.js";
import { checksum } from "../checksum.js";
import { SPEC_AJV_OPTIONS } from "./spec-ajv-options.js";

/** The published schema, schema/agent.schema.json of this package. */
export function agentSchemaPath(): string {
  return join(packageRoot(), "schema", "agent.schema.json");
}

let compiled: Promise<ValidateFunction> | undefined;
let schemaText: string | undefined;

function readSchemaText(): string {
  schemaText ??= readFileSync(agentSchemaPath(), "utf8");
  return schemaText;
}

function compileSchema(): Promise<ValidateFunction> {
  compiled ??= (async () => precompiledValidator() ?? newAjv(SPEC_AJV_OPTIONS).compile(JSON.parse(readSchemaText())))();
  return compiled;
}

/** The validator compiled at build time, when there is one and it was made from the schema text read here (module rules). */
function precompiledValidator(): ValidateFunction | undefined {
  let bundled: ValidateFunction & { schemaChecksum?: unknown };
  try {
    // The literal name: scripts/bundle.mjs makes this call a load of the vendor bundle (SPEC_VALIDATOR_MODULE).
    bundled = requireCjs("yiem:spec-validator") as typeof bundled;
  } catch {
    return undefined; // not bundled: no such module
  }
  return typeof bundled === "function" && bundled.schemaChecksum === checksum(Buffer.from(readSchemaText(), "utf8")) ? bundled : undefined;
}

/**
 * The schema errors of `value` (the interpolated spec of `parsed`), one per key, in document
 * order; empty when it is valid. Each error's `specPath` is the key to set aside. A value found
 * valid before against the same schema text is not checked again (spec-cache.ts).
 */
export async function validateSpec(value: unknown, parsed: ParsedSpecFile, cwd: string, options: ValidateOptions = {}): Promise<ConfigError[]> {
  const scope = options.cache ?? processCacheScope();
  if (knownValid(scope, value, readSchemaText())) return [];
  const validate = await compileSchema();
  if (validate(value)) {
    storeValid(scope, value, readSchemaText());
    return [];
  }
  const seen = new Set<string>();
  const errors: ConfigError[] = [];
  for (const error of validate.errors ?? []) {
    if (options.ignore?.(error)) continue;
    const configError = toConfigError(error, parsed, cwd, options.flagOf);
    const id = JSON.stringify(configError.specPath);
    if (seen.has(id)) continue;
    seen.add(id);
    errors.push(configError);
  }
  // ajv reports in the schema's order; people read the file top to bottom.
  return errors.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
}

export interface ValidateOptions {
  /** The flag that set the key at `specPath` (../config/flag-sets.ts): its error names the flag, not the file. */
  flagOf?: (specPath: SpecPath) => string | undefined;
  /** An error that is not one (a `model` a flag created has its name from --model). */
  ignore?: (error: ErrorObject) => boolean;
  /** The caller's spec cache (../cache-dir.ts); default the process's (the library entry). */
  cache?: CacheScope;
}

/** `/limits/maxTurns` → `["limits", "maxTurns"]` (array indexes as numbers). */
function toSpecPath(instancePath: string): SpecPath {
  if (!instancePath) return [];
  return instancePath
    .slice(1)
    .split("/")
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}

/** `["toolDirs", 1]` → `toolDirs[1]`, `["limits", "maxTurns"]` → `limits.maxTurns`. */
export function formatKey(specPath: SpecPath): string {
  return specPath
    .map((part, index) => (typeof part === "number" ? `[${part}]` : index === 0 ? part : `.${part}`))
    .join("");
}

type SchemaNode = Record<string, unknown>;

/** What a schema node accepts, in words. */
export function describeSchema(schema: SchemaNode): string {
  const types = ([] as string[]).concat((schema.type as string | string[] | undefined) ?? []);
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.join(", ")}`;
  if (typeof schema.pattern === "string" && schema.pattern.includes("(ms|s|m|h)")) {
    const floor = schema.minimum === 1 ? " greater than 0" : "";
    return `a duration${floor}: milliseconds (1500) or a string like "500ms", "30s", "2m"`;
  }
  if (types.length === 1) {
    const [type] = types;
    if (type === "integer" || type === "number") {
      const noun = type === "integer" ? "an integer" : "a number";
      const { minimum: min, maximum: max } = schema;
      if (min !== undefined && max !== undefined) return `${noun} from ${min} to ${max}`;
      if (min !== undefined) return `${noun} >= ${min}`;
      return noun;
    }
    if (type === "string") {
      if (schema.pattern === "^https?://") return "an http(s) URL";
      if (typeof schema.pattern === "string") return "an environment variable NAME (like OPENAI_API_KEY), not a value";
      return schema.minLength ? "a non-empty string" : "a string";
    }
    if (type === "boolean") return "true or false";
    if (type === "object") return "a mapping of keys";
    if (type === "array") {
      const items = schema.items as SchemaNode | undefined;
      return items && Array.isArray(items.enum) ? `a list of: ${items.enum.join(", ")}` : "a list of strings";
    }
  }
  const nouns: Record<string, string> = {
    string: schema.minLength ? "a non-empty string" : "a string",
    object: "a mapping of keys",
    array: "a list of strings",
    integer: "an integer",
  };
  return types.map((type) => nouns[type] ?? type).join(" or ");
}

function toConfigError(error: ErrorObject, parsed: ParsedSpecFile, cwd: string, flagOf?: ValidateOptions["flagOf"]): ConfigError {
  // A value set on the command line is reported as the flag's, without a file or line.
  const fileError = (message: string, at: { file: string; line?: number; key?: string; specPath?: SpecPath; cwd: string }) => {
    const flag = at.specPath && flagOf?.(at.specPath);
    return flag ? new ConfigError(`${flag}: ${message}`, { key: flag, specPath: at.specPath }) : locatedError(message, at);
  };
  const specPath = toSpecPath(error.instancePath);
  const key = formatKey(specPath);
  const where = (line: number | undefined, errorKey: string, at: SpecPath = specPath) => ({ file: parsed.file, line, key: errorKey, specPath: at, cwd });
  const parentSchema = (error.parentSchema ?? {}) as SchemaNode;
  if (error.propertyName !== undefined) {
    // A key that breaks its map's naming rule (MCP server names).
    const keyPath = [...specPath, error.propertyName];
    return fileError(
      `"${formatKey(keyPath)}": the name "${error.propertyName}" must be lowercase letters, digits and -, starting with a letter or digit, 32 at most`,
      where(parsed.lineOf(keyPath, "key"), formatKey(keyPath)),
    );
  }
  switch (error.keyword) {
    case "additionalProperties": {
      const unknown = String((error.params as { additionalProperty: string }).additionalProperty);
      const keyPath = [...specPath, unknown];
      const known = Object.keys((parentSchema.properties as SchemaNode | undefined) ?? {});
      const nearest = nearestName(unknown, known.filter((k) => k !== "$schema"));
      const scope = key ? `"${key}"` : "the spec";
      const hint = nearest ? `did you mean "${nearest}"?` : `allowed: ${known.join(", ")}`;
      return fileError(`unknown key "${unknown}" in ${scope} (${hint})`, where(parsed.lineOf(keyPath, "key"), formatKey(keyPath), keyPath));
    }
    case "required": {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      return fileError(`"${key}" is missing the key "${missing}"`, where(parsed.lineOf(specPath, "key"), key));
    }
    case "not":
      return fileError(
        `use either "systemPrompt" or "systemPromptFile", not both`,
        where(parsed.lineOf(["systemPromptFile"], "key"), "systemPromptFile", ["systemPromptFile"]),
      );
    case "uniqueItems":
      return fileError(`"${key}" lists an item twice`, where(parsed.lineOf(specPath), key));
    default: {
      const line = parsed.lineOf(specPath);
      if (!key) return fileError(`the spec must be a mapping of keys (got ${showValue(error.data)})`, where(line, ""));
      const secret = key === "model.apiKeyEnv";
      const got = secret ? "" : ` (got ${showValue(error.data)})`;
      return fileError(`"${key}" must be ${describeSchema(parentSchema)}${got}`, where(line, key));
    }
  }
}
