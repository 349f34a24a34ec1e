/**
 * Syntax checks without running anything: sucrase parses the TypeScript, then V8 compiles the
 * resulting JavaScript (strict, as module code is) in the same async wrapper the loader uses, so
 * what passes here also compiles when loaded. Lines are relative to the given source.
 */
import { Script } from "node:vm";
import { IMPORT_IDENTIFIER, META_IDENTIFIER, transformSource, withLocation } from "./transform.js";

export interface SyntaxProblem {
  /** 1-based. */
  line: number;
  /** 0-based. */
  column: number;
  message: string;
}

/**
 * The first syntax error of TypeScript `source`, or null. `bodyOnly` checks it as the body of an
 * async function (top-level `return` and `await` allowed; `import` declarations are not).
 */
export function findSyntaxProblem(source: string, filename: string, options: { bodyOnly: boolean }): SyntaxProblem | null {
  const text = options.bodyOnly ? `async function __body() {\n${source}\n}` : source;
  const lineShift = options.bodyOnly ? -1 : 0;
  try {
    // A body keeps its import declarations, so V8 refuses them; a file's become require calls.
    const code = transformSource(text, filename, { typescript: true, imports: !options.bodyOnly });
    const header = `"use strict";(async function (exports, require, module, __filename, __dirname, ${META_IDENTIFIER}, ${IMPORT_IDENTIFIER}) {`;
    try {
      new Script(`${header}${code}\n})`, { filename, columnOffset: -header.length });
    } catch (error) {
      throw withLocation(error, filename, header.length);
    }
    return null;
  } catch (error) {
    const located = error as { line?: unknown; column?: unknown; reason?: unknown; message?: unknown };
    if (typeof located.line !== "number") return { line: 1, column: 0, message: String(located.message ?? error) };
    return {
      line: Math.max(1, located.line + lineShift),
      column: typeof located.column === "number" ? Math.max(0, located.column - 1) : 0,
      message: String(located.reason ?? located.message),
    };
  }
}
