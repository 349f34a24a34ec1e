import { mkdtemp, mkdir, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ts from "typescript";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  generateToolSource,
  ToolDraftError,
  undoWrite,
  writeGeneratedTool,
  type ToolDraft,
} from "../../src/tools/generator.js";
import { loadToolFile, loadTools } from "../../src/tools/loader.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { prepareArguments } from "../../src/loop/prepare.js";
import { createListTools } from "../../src/tools/builtins/listTools.js";

let root: string;
let dir: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "yiem-gen-"));
  dir = join(root, "tools");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function draft(extra: Partial<ToolDraft> & Record<string, unknown> = {}): ToolDraft {
  return {
    name: "shout",
    label: "Shout",
    description: "Upper-cases a text.",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    executeCode: "return toolResult(String(args.text).toUpperCase());",
    ...extra,
  } as ToolDraft;
}

async function filesIn(folder: string): Promise<string[]> {
  return readdir(folder).catch(() => []);
}

async function expectRejected(input: unknown, pattern: RegExp, options: { registry?: ToolRegistry; overwrite?: boolean } = {}) {
  const error = await writeGeneratedTool(input, { dir, ...options }).then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(ToolDraftError);
  expect((error as Error).message).toMatch(pattern);
}

describe("writeGeneratedTool: names", () => {
  const bad = ["../x", "a/b", "..\\x", "x.ts", "", "a".repeat(65), "1abc", "a\u0000b", "__proto__", "_x", "-dash", "a b"];
  for (const name of bad) {
    it(`refuses the name ${JSON.stringify(name)} and writes nothing`, async () => {
      await expectRejected(draft({ name }), /invalid tool name/);
      expect(await filesIn(dir)).toEqual([]);
      expect(await filesIn(root)).toEqual([]);
    });
  }

  it("accepts a 64-character name", async () => {
    const written = await writeGeneratedTool(draft({ name: `a${"b".repeat(63)}` }), { dir });
    expect(written.path.endsWith(`a${"b".repeat(63)}.ts`)).toBe(true);
  });

  it("refuses a non-string name", async () => {
    await expectRejected(draft({ name: 42 as unknown as string }), /invalid tool name number/);
  });

  for (const builtin of ["listTools", "writeTool"]) {
    it(`refuses the built-in name ${builtin}, even with overwrite`, async () => {
      await expectRejected(draft({ name: builtin }), /built-in/, { overwrite: true });
      expect(await filesIn(dir)).toEqual([]);
    });
  }

  it("refuses a name taken by a loaded tool unless overwriting, and never one defined elsewhere", async () => {
    const other = join(root, "other");
    await mkdir(other);
    await writeFile(join(other, "shout.ts"), await generateSource(draft()));
    const { registry, problems } = await loadTools([other]);
    expect(problems).toEqual([]);
    await expectRejected(draft(), /already exists.*overwrite/, { registry });
    await expectRejected(draft(), /defined in .*other.*shout\.ts/, { registry, overwrite: true });
    expect(await filesIn(dir)).toEqual([]);
  });

  it("refuses a registered built-in by name even when the registry marks it so", async () => {
    const registry = new ToolRegistry();
    registry.register({ ...createListTools(registry), name: "myList" }, { kind: "builtin" });
    await expectRejected(draft({ name: "myList" }), /built-in tool and cannot be replaced/, { registry, overwrite: true });
  });

  it("overwrites its own file when asked, and refuses without overwrite", async () => {
    const first = await writeGeneratedTool(draft(), { dir });
    expect(first.previous).toBeNull();
    const { registry } = await loadTools([dir]);
    await expectRejected(draft({ label: "Again" }), /already exists/, { registry });
    const second = await writeGeneratedTool(draft({ label: "Again" }), { dir, registry, overwrite: true });
    expect(second.previous).toBe(first.source);
    expect((await loadToolFile(second.path)).label).toBe("Again");
  });

  it("refuses a file that differs only in letter case, and a sibling tool file of the same name", async () => {
    await mkdir(dir);
    await writeFile(join(dir, "Shout.ts"), "export default 1;\n");
    await expectRejected(draft(), /only in letter case/, { overwrite: true });
    await rm(join(dir, "Shout.ts"));
    await writeFile(join(dir, "shout.tool.yaml"), "name: shout\n");
    await expectRejected(draft(), /already holds a tool file/, { overwrite: true });
    expect((await filesIn(dir)).sort()).toEqual(["shout.tool.yaml"]);
  });
});

async function generateSource(d: ToolDraft): Promise<string> {
  return generateToolSource(d).source;
}

describe("writeGeneratedTool: text is data", () => {
  const nasty = [
    '"; process.exit(1); //',
    "back`tick` and ${process.exit(1)} and ${'x'}",
    "*/ process.exit(1); /*",
    "line one\nimport fs from 'node:fs';\nprocess.exit(1)",
    "u2028:\u2028 u2029:\u2029 end",
    "quote ' double \" backslash \\ \\u0041 \\n",
    "</script><!-- --> \r\n carriage",
    "lone surrogate \ud800 and emoji 🎉",
  ];

  it("keeps every label and description verbatim, with exactly one statement per part", async () => {
    for (const [i, text] of nasty.entries()) {
      const name = `tool${i}`;
      const written = await writeGeneratedTool(draft({ name, label: text, description: `${text} (description)` }), { dir });
      const source = await readFile(written.path, "utf8");
      const file = ts.createSourceFile(`${name}.ts`, source, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
      expect((file as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics).toEqual([]);
      expect(file.statements.map((s) => ts.SyntaxKind[s.kind])).toEqual(["ImportDeclaration", "ExportAssignment"]);
      const call = (file.statements[1] as ts.ExportAssignment).expression as ts.CallExpression;
      expect(call.expression.getText(file)).toBe("defineTool");
      const object = call.arguments[0] as ts.ObjectLiteralExpression;
      const props = object.properties.map((p) => p.name!.getText(file));
      expect(props).toEqual(["name", "label", "description", "inputSchema", "parallelToolExecute", "execute"]);
      const valueOf = (key: string) => {
        const prop = object.properties.find((p) => p.name!.getText(file) === key) as ts.PropertyAssignment;
        expect(prop.initializer.kind).toBe(ts.SyntaxKind.StringLiteral);
        return (prop.initializer as ts.StringLiteral).text;
      };
      expect(valueOf("label")).toBe(text);
      expect(valueOf("description")).toBe(`${text} (description)`);
      const tool = await loadToolFile(written.path);
      expect(tool.label).toBe(text);
      expect(tool.description).toBe(`${text} (description)`);
    }
  });

  it("keeps schema strings verbatim", async () => {
    const schema = { type: "object", properties: { "a\"b`${c}\u2028": { type: "string", description: "*/ ${x} `y` \n import z" } } };
    const written = await writeGeneratedTool(draft({ inputSchema: schema }), { dir });
    expect((await loadToolFile(written.path)).inputSchema).toEqual(schema);
  });
});

describe("writeGeneratedTool: schemas", () => {
  const bad: Array<[string, unknown, RegExp]> = [
    ["a string schema", { type: "string" }, /"object"/],
    ["an array", [], /JSON Schema object/],
    ["null", null, /JSON Schema object/],
    ["an unknown type name", { type: "object", properties: { a: { type: "strin" } } }, /not a valid JSON Schema/],
    ["required that is not a list", { type: "object", required: "a" }, /not a valid JSON Schema/],
    ["a __proto__ key", JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}'), /__proto__/],
  ];
  for (const [what, schema, pattern] of bad) {
    it(`refuses ${what} and writes nothing`, async () => {
      await expectRejected(draft({ inputSchema: schema as ToolDraft["inputSchema"] }), pattern);
      expect(await filesIn(dir)).toEqual([]);
    });
  }
});

describe("writeGeneratedTool: code", () => {
  it("reports a syntax error with the line relative to executeCode, and writes nothing", async () => {
    const executeCode = "const a = 1;\nconst b = (;\nreturn toolResult(String(a));";
    await expectRejected(draft({ executeCode }), /^executeCode line 2, column \d+: .*does not compile[\s\S]*2 \| const b = \(;/);
    expect(await filesIn(dir)).toEqual([]);
  });

  it("reports errors in validateCode and prepareCode by their own lines", async () => {
    await expectRejected(draft({ validateCode: "if (!args.text) {\n  return 'x' +;\n}" }), /^validateCode line 2/);
    await expectRejected(draft({ prepareCode: "\n\nreturn {{;" }), /^prepareCode line 3/);
  });

  it("refuses a body that closes its function early", async () => {
    await expectRejected(draft({ executeCode: "return toolResult('x');\n},\nextra() {\nprocess.exit(1);" }), /^executeCode line 2/);
    await expect(writeGeneratedTool(draft({ executeCode: "return 1; } }); process.exit(1); (function () {" }), { dir })).rejects.toThrow(/executeCode line 1/);
    expect(await filesIn(dir)).toEqual([]);
  });

  it("refuses an import statement inside a body, naming the line", async () => {
    await expectRejected(draft({ executeCode: "// first\nimport fs from 'node:fs';\nreturn toolResult('x');" }), /^executeCode line 2/);
  });

  it("refuses empty or missing executeCode and wrong field types", async () => {
    await expectRejected(draft({ executeCode: "  " }), /executeCode/);
    await expectRejected({ ...draft(), executeCode: undefined }, /"executeCode" is required/);
    await expectRejected(draft({ label: "" }), /"label"/);
    await expectRejected(draft({ description: 7 as unknown as string }), /"description"/);
    await expectRejected(draft({ parallel: "yes" as unknown as boolean }), /"parallel"/);
    await expectRejected("not an object", /must be an object/);
  });

  it("places every body in its function: prepare, validate and execute run in order", async () => {
    const written = await writeGeneratedTool(
      draft({
        name: "greet",
        inputSchema: { type: "object", properties: { who: { type: "string" } }, required: ["who"] },
        prepareCode: "const a = args as any;\nreturn { who: a.who ?? a.name };",
        validateCode: "if (args.who === 'nobody') return 'who must be somebody';",
        executeCode: "onPartialResult('greeting');\nreturn toolResult(`hello ${args.who}`, { details: { toolCallId } });",
        parallel: false,
      }),
      { dir },
    );
    const tool = await loadToolFile(written.path);
    expect(tool.parallelToolExecute).toBe(false);
    const ok = await prepareArguments(tool, '{"name":"Ann"}');
    expect(ok).toEqual({ ok: true, args: { who: "Ann" } });
    const rejected = await prepareArguments(tool, '{"who":"nobody"}');
    expect(rejected.ok).toBe(false);
    expect(!rejected.ok && rejected.reason).toMatch(/who must be somebody/);
    const partials: unknown[] = [];
    const result = await tool.execute("call_1", { who: "Ann" }, new AbortController().signal, (p) => partials.push(p));
    expect(result).toEqual({ content: [{ type: "text", text: "hello Ann" }], details: { toolCallId: "call_1" } });
    expect(partials).toEqual(["greeting"]);
  });

  it("accepts TypeScript syntax and CRLF line endings in bodies", async () => {
    const executeCode = "const n: number = (args.text as string).length;\r\nreturn toolResult(`${n}`);";
    const written = await writeGeneratedTool(draft({ executeCode }), { dir });
    const tool = await loadToolFile(written.path);
    expect(await tool.execute("c", { text: "abcd" }, new AbortController().signal, () => {})).toEqual({ content: [{ type: "text", text: "4" }] });
  });
});

describe("writeGeneratedTool: files", () => {
  it("writes atomically: the file appears whole and no temp file is left", async () => {
    const written = await writeGeneratedTool(draft(), { dir });
    expect(await filesIn(dir)).toEqual(["shout.ts"]);
    expect(await readFile(written.path, "utf8")).toBe(written.source);
  });

  it("refuses a tool folder that is a symbolic link to elsewhere", async () => {
    const elsewhere = join(root, "elsewhere");
    await mkdir(elsewhere);
    await symlink(elsewhere, dir);
    await expectRejected(draft(), /symbolic link/);
    expect(await filesIn(elsewhere)).toEqual([]);
  });

  it("refuses a target file that is a symbolic link pointing outside, even with overwrite", async () => {
    await mkdir(dir);
    const outside = join(root, "outside.ts");
    await writeFile(outside, "keep me\n");
    await symlink(outside, join(dir, "shout.ts"));
    await expectRejected(draft(), /symbolic link/, { overwrite: true });
    expect(await readFile(outside, "utf8")).toBe("keep me\n");
  });

  it("creates a missing folder, and works in a folder outside the repository that imports yiem", async () => {
    const nested = join(root, "deep", "er");
    const written = await writeGeneratedTool(draft(), { dir: nested });
    expect((await loadToolFile(written.path)).name).toBe("shout");
    expect(written.source).toContain('from "yiem"');
  });

  it("undoWrite puts the previous content back, or removes a new file", async () => {
    const first = await writeGeneratedTool(draft(), { dir });
    const second = await writeGeneratedTool(draft({ label: "Two" }), { dir, overwrite: true });
    await undoWrite(second);
    expect(await readFile(first.path, "utf8")).toBe(first.source);
    await undoWrite(first);
    expect(await filesIn(dir)).toEqual([]);
  });
});
