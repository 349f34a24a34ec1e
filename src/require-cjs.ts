/**
 * This package's `require`. CommonJS dependencies (yargs, ajv for the spec, sucrase)
 * are loaded with it, not with `import()`: importing a CommonJS package as an ES module makes Node
 * scan every file of it for export names first (cjs-module-lexer), ~10 ms per package, paid on
 * every start-up (docs/performance.md). The tool loader also requires the built library with it
 * (Node 20.19+ requires ES modules without top-level await). Type each call with
 * `typeof import("pkg")`.
 */
import { createRequire } from "node:module";

export const requireCjs = createRequire(import.meta.url);
