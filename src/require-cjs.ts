/**
 * CommonJS dependencies (yargs, cosmiconfig, ajv, ajv-formats) are loaded with `require`, not
 * `import()`: importing a CommonJS package as an ES module makes Node scan every file of it for
 * export names first (cjs-module-lexer), ~10 ms per package, paid on every start-up
 * (docs/performance.md). Type each call with `typeof import("pkg")`.
 */
import { createRequire } from "node:module";

export const requireCjs = createRequire(import.meta.url);
