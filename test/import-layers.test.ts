/**
 * The layers of src/ (docs/architecture.md): no import cycles between files (type-only and
 * dynamic `import()` included), and no file imports a layer above its own:
 *   cli → config / hooks / sessions / mcp → loop → provider → tools → the shared base (src/*.ts, channels/, wasm/).
 * src/index.ts is the library's entry, above every layer.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "..", "src");
const RANK: Record<string, number> = { base: 0, channels: 0, wasm: 0, tools: 1, provider: 2, loop: 3, config: 4, hooks: 4, sessions: 4, mcp: 4, doctor: 4, batch: 4, cli: 5 };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Every relative import of `file` (static, type-only, re-exports, dynamic), as src-relative .ts paths. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return importedFiles
    .map((ref) => ref.fileName)
    .filter((name) => name.startsWith("."))
    .map((name) => relative(SRC, resolve(dirname(file), name)).replace(/\.js$/, ".ts"));
}

function layerOf(path: string): string {
  return path.includes("/") ? path.split("/")[0] : "base";
}

const graph = new Map(sourceFiles(SRC).map((file) => [relative(SRC, file), importsOf(file)]));

/** The strongly connected components with more than one file (Tarjan). */
function cycles(): string[][] {
  let index = 0;
  const stack: string[] = [];
  const onStack = new Set<string>();
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const found: string[][] = [];
  const visit = (v: string) => {
    indexOf.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!indexOf.has(file)) visit(file);
  return found;
}

describe("src/ import structure", () => {
  it("reads the whole tree, and every import names a file that exists", () => {
    expect(graph.size).toBeGreaterThan(100);
    const missing = [...graph].flatMap(([file, deps]) => deps.filter((dep) => !graph.has(dep)).map((dep) => `${file} -> ${dep}`));
    expect(missing).toEqual([]);
  });

  it("has no import cycle between files", () => {
    expect(cycles()).toEqual([]);
  });

  it("never imports a layer above the importing file's own", () => {
    const upward: string[] = [];
    for (const [file, deps] of graph) {
      if (file === "index.ts") continue;
      const from = layerOf(file);
      expect(RANK, `${file}: its folder needs a layer in RANK`).toHaveProperty(from);
      for (const dep of deps) if (RANK[layerOf(dep)] > RANK[from]) upward.push(`${file} (${from}) -> ${dep} (${layerOf(dep)})`);
    }
    expect(upward).toEqual([]);
  });

  it("the checker itself sees a cycle and an upward import when there is one", () => {
    const saved = new Map(graph);
    graph.set("tools/registry.ts", [...(graph.get("tools/registry.ts") ?? []), "loop/run-agent.ts"]);
    try {
      expect(cycles().length).toBeGreaterThan(0);
      expect(RANK[layerOf("loop/run-agent.ts")]).toBeGreaterThan(RANK[layerOf("tools/registry.ts")]);
    } finally {
      graph.clear();
      for (const [k, v] of saved) graph.set(k, v);
    }
  });
});
