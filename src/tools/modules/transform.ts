/**
 * Source → CommonJS code, through sucrase (loaded on first use only: it costs ~60 ms). Rules:
 * - line numbers are kept (sucrase keeps lines; the rewrites below never add or drop a newline);
 * - `import.meta` becomes `__yiem_meta` and a dynamic `import(` becomes `__yiemImport(`, found
 *   through sucrase's own tokens, so strings, comments, property names (`obj.import(`) and type
 *   positions (`typeof import("x")`) are never touched;
 * - a syntax error becomes a `SyntaxError` whose message starts with `file:line:column`.
 */
import { requireCjs } from "../../require-cjs.js";

/** The identifier `import.meta` becomes (as long as `import.meta`, so columns stay put). */
export const META_IDENTIFIER = "__yiem_meta";
/** The function a dynamic `import(` calls instead. */
export const IMPORT_IDENTIFIER = "__yiemImport";

export interface TransformOptions {
  /** Strip TypeScript syntax. */
  typescript: boolean;
  /** Turn `import`/`export` into `require`/`exports` (false: leave them, e.g. for a body check). */
  imports: boolean;
}

interface SucraseToken {
  type: number;
  start: number;
  end: number;
  isType: boolean;
}

interface Sucrase {
  transform(code: string, options: Record<string, unknown>): { code: string };
  parse(code: string, jsx: boolean, typescript: boolean, flow: boolean): { tokens: SucraseToken[] };
  tt: { _import: number; name: number; dot: number; questionDot: number; parenL: number };
}

let sucrase: Sucrase | undefined;

function getSucrase(): Sucrase {
  if (!sucrase) {
    const require = requireCjs;
    const { transform } = require("sucrase") as Pick<Sucrase, "transform">;
    const { parse } = require("sucrase/dist/parser") as Pick<Sucrase, "parse">;
    const { TokenType } = require("sucrase/dist/parser/tokenizer/types") as { TokenType: Sucrase["tt"] };
    sucrase = { transform, parse, tt: TokenType };
  }
  return sucrase;
}

/** May `source` hold `import.meta` or a dynamic `import(`? (A cheap pre-check; comments included.) */
const MAYBE_META_OR_DYNAMIC_IMPORT = /\bimport\s*(?:[.(]|\/[*/])/;

/** Transforms `source` of `filename` (used in messages only). Throws `SyntaxError` naming file:line:column. */
export function transformSource(source: string, filename: string, options: TransformOptions): string {
  const { transform } = getSucrase();
  const transforms = [...(options.typescript ? ["typescript"] : []), ...(options.imports ? ["imports"] : [])];
  try {
    const rewritten = MAYBE_META_OR_DYNAMIC_IMPORT.test(source) ? rewriteMetaAndDynamicImport(source, options.typescript) : source;
    if (transforms.length === 0) return rewritten;
    return transform(rewritten, {
      transforms,
      filePath: filename,
      disableESTransforms: true,
      production: true,
      preserveDynamicImport: true,
      // Without the imports transform nothing may vanish: a body check must see every import.
      keepUnusedImports: !options.imports,
    }).code;
  } catch (error) {
    throw toSyntaxError(error, filename);
  }
}

/** Replaces `import.meta` and dynamic `import(` tokens; everything else is copied verbatim. */
function rewriteMetaAndDynamicImport(source: string, typescript: boolean): string {
  const { parse, tt } = getSucrase();
  const tokens = parse(source, false, typescript, false).tokens;
  let out = "";
  let copied = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    const previous = tokens[i - 1];
    if (previous && (previous.type === tt.dot || previous.type === tt.questionDot)) continue;
    const next = tokens[i + 1];
    if (!next || token.isType) continue;
    if (token.type === tt._import && next.type === tt.parenL) {
      out += source.slice(copied, token.start) + IMPORT_IDENTIFIER;
      copied = token.end;
    } else if (
      token.type === tt.name && next.type === tt.dot && tokens[i + 2]?.type === tt.name &&
      source.slice(token.start, token.end) === "import" && source.slice(tokens[i + 2].start, tokens[i + 2].end) === "meta"
    ) {
      const end = tokens[i + 2].end;
      const newlines = source.slice(token.start, end).split("\n").length - 1;
      out += source.slice(copied, token.start) + META_IDENTIFIER + "\n".repeat(newlines);
      copied = end;
      i += 2;
    }
  }
  return copied === 0 ? source : out + source.slice(copied);
}

interface SucraseError {
  message: string;
  loc?: { line: number; column: number };
}

/** Sucrase's error (`Error transforming X: msg (l:c)`) as `file:line:column: msg`. */
function toSyntaxError(error: unknown, filename: string): Error {
  const { message, loc } = (error ?? {}) as SucraseError;
  if (!loc || typeof message !== "string") return error instanceof Error ? error : new Error(String(error));
  const prefix = `Error transforming ${filename}: `;
  const reason = (message.startsWith(prefix) ? message.slice(prefix.length) : message).replace(/\s*\(\d+:\d+\)\s*$/, "");
  const syntaxError = new SyntaxError(`${filename}:${loc.line}:${loc.column}: ${reason}`);
  Object.assign(syntaxError, { line: loc.line, column: loc.column, reason });
  return syntaxError;
}

/**
 * A V8 `SyntaxError` (location only in its stack) with `file:line:column: ` put in front of the
 * message; `headerLength` characters of wrapper precede the source on line 1.
 */
export function withLocation(error: unknown, path: string, headerLength: number): unknown {
  if (!(error instanceof SyntaxError) || typeof error.stack !== "string") return error;
  const [where, , caret] = error.stack.split("\n");
  const line = where?.startsWith(`${path}:`) ? Number(where.slice(path.length + 1)) : NaN;
  if (!Number.isInteger(line)) return error;
  const caretAt = caret?.indexOf("^") ?? -1;
  const column = caretAt < 0 ? 0 : caretAt + 1 - (line === 1 ? headerLength : 0);
  const located = new SyntaxError(`${path}:${line}${column > 0 ? `:${column}` : ""}: ${error.message}`);
  Object.assign(located, { line, column: Math.max(column, 1), reason: error.message });
  return located;
}
