/** Syntax checks without running code (src/tools/modules/syntax.ts), as the tool generator uses them. */
import { describe, expect, it } from "vitest";
import { findSyntaxProblem } from "../../../src/tools/modules/syntax.js";

const body = (source: string) => findSyntaxProblem(source, "executeCode.ts", { bodyOnly: true });
const file = (source: string) => findSyntaxProblem(source, "tool.ts", { bodyOnly: false });

describe("findSyntaxProblem", () => {
  it("accepts a body with TypeScript, top-level return and await, import.meta and dynamic import", () => {
    expect(body("const n: number = await Promise.resolve(1);\nconst m = await import('node:path');\nreturn `${n} ${import.meta.url} ${typeof m}`;")).toBeNull();
  });

  it("reports a parse error by its line in the given source", () => {
    expect(body("const a = 1;\nconst b = (;\nreturn a;")).toMatchObject({ line: 2, message: "Unexpected token" });
    expect(file('import { x } from "y";\n\nexport default {{{')).toMatchObject({ line: 3 });
  });

  it("reports what only the JavaScript engine sees: import in a body, redeclarations, await in a plain function", () => {
    expect(body("// first\nimport fs from 'node:fs';\nreturn fs;")).toMatchObject({ line: 2, message: expect.stringMatching(/import/) });
    expect(body("let a = 1;\nlet a = 2;")).toMatchObject({ line: 2, column: 4, message: "Identifier 'a' has already been declared" });
    expect(body("[1].map(function () {\n  await 1;\n});")).toMatchObject({ line: 2, message: expect.stringMatching(/await/) });
  });

  it("checks module code in strict mode, as it runs", () => {
    expect(file("export const n = 1;\nwith (Math) { n; }")).toMatchObject({ line: 2 });
    expect(file("export function f(a, a) {}")).toMatchObject({ line: 1 });
  });

  it("refuses a body that closes its function early", () => {
    expect(body("return 1;\n},\nextra() {\nprocess.exit(1);")).toMatchObject({ line: 2 });
  });
});
