#!/usr/bin/env node
/**
 * `npm run build`, step 2 (after tsc): the bundled runtime in dist/bundle/ (docs/performance.md,
 * "The bundle"). Rules:
 * - three entry points, named by module, so files may move inside src/ freely: `cli` (the CLI,
 *   src/cli/main.ts, what bin/yiem.js runs), `index` (the library, src/index.ts) and `tool-kit`
 *   (src/tools/define.ts, what a tool file needs of `yiem` to be defined; src/tools/modules/interop.ts
 *   serves it before the rest of the library). With code splitting every module's code is in
 *   exactly one output file, so the CLI, the library and tool files share one instance of each
 *   module (the registry, the tool kit, the error classes);
 * - dist/index.js (the package's `exports` entry) is rewritten to re-export the bundle's library
 *   entry, so `import … from "yiem"` anywhere (a tool file, a program using the library) gets
 *   those same instances; its types stay tsc's dist/index.d.ts;
 * - split points: every `import()` of a package (openai, ajv, yaml, execa, the MCP SDK: each its
 *   own chunk, loaded on first use), and of yiem's own modules those matching `LAZY_MODULES` (the
 *   command modules, the MCP client). Every other `import()` of a module of yiem's own becomes a
 *   static import (`lazyImports`): without that, esbuild would make a chunk for each
 *   combination of entry points that reach a module, ~90 files, and a start-up would read most;
 * - dependencies are bundled into those chunks (one file instead of ~200 for ajv or yaml), except
 *   the ones yiem loads with `require` at run time (yargs, sucrase: src/require-cjs.ts), which
 *   stay in node_modules;
 * - source maps (`*.map`, linked) point at src/; Node reads them only when source maps are
 *   enabled (bin/yiem.js does that for `--debug`), so they cost nothing otherwise.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const outdir = `${root}dist/bundle`;
const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8"));

/** The entry points (output name → source module). interop.ts knows `index` and `tool-kit`. */
export const ENTRY_POINTS = { cli: "src/cli/main.ts", index: "src/index.ts", "tool-kit": "src/tools/define.ts" };

/** Packages loaded with `require` at run time (never seen by the bundler) stay external anyway; named here so esbuild never inlines them. */
const EXTERNAL = ["yargs", "yargs/*", "sucrase", "sucrase/*"];

/** yiem's own modules (path below src/) that stay behind `import()`, each command a chunk of its own. */
const LAZY_MODULES = [/^cli\/commands\//, /^mcp\//];

/** `import("…")` with a literal specifier, outside type positions (`typeof import(…)`). */
const DYNAMIC_IMPORT = /(?<!typeof\s*)\bimport\(\s*"([^"]+)"\s*\)/g;

/**
 * An esbuild plugin for yiem's sources (src/**.ts):
 * - `import("./x.js")` of a module not matching LAZY_MODULES becomes `Promise.resolve(ns)` of a
 *   static `import * as ns from "./x.js"` (same namespace, same promise shape; the module is
 *   evaluated with its importer instead of on first use);
 * - `import("pkg")` of a package goes through a one-line module `yiem-lazy:pkg`
 *   (`import * as ns from "pkg"; export default ns`): a chunk of its own either way, but esbuild
 *   gives a bare `import()` of a CommonJS package (ajv, yaml) only a `default` export, where
 *   Node gives the named exports too;
 * - `import("node:…")` is left alone.
 */
const lazyImports = {
  name: "yiem-lazy-imports",
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, ({ path }) => {
      const source = readFileSync(path, "utf8");
      const imports = [];
      const contents = source.replace(DYNAMIC_IMPORT, (whole, specifier) => {
        if (specifier.startsWith("node:")) return whole;
        if (!specifier.startsWith(".")) return `import(${JSON.stringify(`yiem-lazy:${specifier}`)}).then((m) => m.default)`;
        const target = relative(`${root}src`, resolve(dirname(path), specifier)).replaceAll("\\", "/");
        if (LAZY_MODULES.some((pattern) => pattern.test(target))) return whole;
        const name = `__yiemEager${imports.length}`;
        imports.push(`import * as ${name} from ${JSON.stringify(specifier)};`);
        return `Promise.resolve(${name})`;
      });
      return { contents: imports.length ? `${imports.join("")}${contents}` : contents, loader: "ts" };
    });
    b.onResolve({ filter: /^yiem-lazy:/ }, ({ path }) => ({ path: path.slice("yiem-lazy:".length), namespace: "yiem-lazy" }));
    b.onLoad({ filter: /.*/, namespace: "yiem-lazy" }, ({ path }) => ({
      contents: `import * as ns from ${JSON.stringify(path)}; export default ns;`,
      resolveDir: root,
      loader: "js",
    }));
  },
};

rmSync(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: ENTRY_POINTS,
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: `node${pkg.engines.node.replace(/^>=/, "")}`,
  external: EXTERNAL,
  sourcemap: "linked",
  // Paths in the maps relative to the map file (../../src/…); the sources themselves are not copied in.
  sourcesContent: false,
  chunkNames: "chunks/[name]-[hash]",
  // Bundled CommonJS packages (ajv, …) may call `require` for Node built-ins.
  banner: { js: 'import { createRequire as __yiemCreateRequire } from "node:module"; const require = __yiemCreateRequire(import.meta.url);' },
  legalComments: "none",
  logLevel: "warning",
  metafile: true,
  plugins: [lazyImports],
});

// The library entry of the package re-exports the bundle's, so there is one copy of each module.
writeFileSync(`${root}dist/index.js`, [
  "// The yiem library: the bundle's library entry (scripts/bundle.mjs), so tool files and the CLI",
  "// share one instance of every module. Types: index.d.ts.",
  'export * from "./bundle/index.js";',
  "",
].join("\n"));
rmSync(`${root}dist/index.js.map`, { force: true });

/**
 * dist/bundle/manifest.json: for each output file (relative to dist/bundle/), the packages and the
 * yiem sources bundled into it. test/startup.test.ts reads it to name the chunks a command loaded.
 */
const files = {};
for (const [file, output] of Object.entries(result.metafile.outputs)) {
  if (file.endsWith(".map")) continue;
  const inputs = Object.keys(output.inputs);
  const packages = [...new Set(inputs.map((i) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(i)?.[1]).filter(Boolean))].sort();
  const sources = inputs.filter((i) => i.startsWith("src/")).sort();
  files[relative(outdir, `${root}${file}`).replaceAll("\\", "/")] = { packages, sources };
}
writeFileSync(`${outdir}/manifest.json`, `${JSON.stringify({ entryPoints: ENTRY_POINTS, files }, null, 2)}\n`);

if (process.argv.includes("--report")) {
  for (const [file, { bytes }] of Object.entries(result.metafile.outputs)) if (!file.endsWith(".map")) process.stdout.write(`${(bytes / 1024).toFixed(0).padStart(6)} KB  ${file}\n`);
}
