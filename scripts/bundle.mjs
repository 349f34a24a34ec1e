#!/usr/bin/env node
/**
 * `npm run build`, step 2 (after tsc): the bundled runtime in dist/bundle/ (docs/performance.md,
 * "The bundle"). Rules:
 * - three entry points, named by module, so files may move inside src/ freely: `cli` (the CLI,
 *   src/cli/bin-entry.ts: main and the real process io, what bin/yiem.js runs), `index` (the library, src/index.ts) and `tool-kit`
 *   (src/tools/define.ts, what a tool file needs of `yiem` to be defined; src/tools/modules/interop.ts
 *   serves it before the rest of the library). With code splitting every module's code is in
 *   exactly one output file, so the CLI, the library and tool files share one instance of each
 *   module (the registry, the tool kit, the error classes);
 * - dist/index.js (the package's `exports` entry) is rewritten to re-export the bundle's library
 *   entry, so `import … from "yiem"` anywhere (a tool file, a program using the library) gets
 *   those same instances; its types stay tsc's dist/index.d.ts;
 * - split points: every `import()` of a package (openai, ajv, yaml, execa, the MCP SDK: each its
 *   own chunk, loaded on first use), and of yiem's own modules those matching `LAZY_MODULES` (the MCP
 *   client, the tool module loader, the tool generator). Every other `import()` of a module of yiem's own becomes a
 *   static import (`lazyImports`): without that, esbuild would make a chunk for each
 *   combination of entry points that reach a module, ~90 files, and a start-up would read most;
 * - dependencies are bundled into those chunks (one file instead of ~200 for ajv or yaml). Of the
 *   ones yiem loads with `requireCjs` (src/require-cjs.ts), yargs (`BUNDLED_REQUIRES`: every
 *   command parses with it) is bundled too, its CommonJS build as Node's `require` resolves it;
 *   the others (sucrase, on a cold tool cache only) stay in node_modules;
 * - source maps (`*.map`, linked) point at src/; Node reads them only when source maps are
 *   enabled (bin/yiem.js does that for `--debug`), so they cost nothing otherwise.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const outdir = `${root}dist/bundle`;
const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8"));

/** The entry points (output name → source module). interop.ts knows `index` and `tool-kit`. */
export const ENTRY_POINTS = { cli: "src/cli/bin-entry.ts", index: "src/index.ts", "tool-kit": "src/tools/define.ts" };

/** Packages loaded with `requireCjs` at run time that stay in node_modules (named so esbuild never inlines them). */
const EXTERNAL = ["sucrase", "sucrase/*"];

/** `requireCjs("…")` calls made static imports of the package's CommonJS build (see `lazyImports`). */
const BUNDLED_REQUIRES = ["yargs/yargs"];
const REQUIRE_CJS_CALL = /\brequireCjs\(\s*"([^"]+)"\s*\)/g;
const requireFromRoot = createRequire(`${root}package.json`);

/**
 * yiem's own modules (path below src/) that stay behind `import()`: the MCP client, the tool
 * module loader and the tool generator (`tools new`, writeTool). The command modules are part of
 * the start-up graph: small next to what a start-up reads anyway, and one file instead of ~10.
 */
// mcp/required-error.ts is the exception: the error class the CLI tells apart without the client.
const LAZY_MODULES = [/^mcp\/(?!required-error\.)/, /^tools\/modules\//, /^tools\/(generator|command-scaffold)\./];

/** `import("…")` with a literal specifier, outside type positions (`typeof import(…)`). */
// Not a type (`typeof import("x")`, `import("x").Name`: esbuild drops those); `.then`/`.catch`/`.finally` are runtime.
const DYNAMIC_IMPORT = /(?<!typeof\s*)\bimport\(\s*"([^"]+)"\s*\)(?!\s*\.\s*(?!then\b|catch\b|finally\b)[A-Za-z_$])/g;

/**
 * An esbuild plugin for yiem's sources (src/**.ts):
 * - `import("./x.js")` of a module not matching LAZY_MODULES becomes `Promise.resolve(ns)` of a
 *   static `import * as ns from "./x.js"` (same namespace, same promise shape; the module is
 *   evaluated with its importer instead of on first use);
 * - `import("pkg")` of a package goes through a one-line module `yiem-lazy:pkg`
 *   (`import * as ns from "pkg"; export default ns`): a chunk of its own either way, but esbuild
 *   gives a bare `import()` of a CommonJS package (ajv, yaml) only a `default` export, where
 *   Node gives the named exports too;
 * - `import("node:…")` is left alone;
 * - `requireCjs("pkg")` of a package in BUNDLED_REQUIRES becomes a static import of the file
 *   Node's `require` would load (module.exports as the default export), so it is bundled; yargs'
 *   `__dirname` (where it reads its locale files) becomes its folder in node_modules.
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
      }).replace(REQUIRE_CJS_CALL, (whole, specifier) => {
        if (!BUNDLED_REQUIRES.includes(specifier)) return whole;
        const name = `__yiemRequired${imports.length}`;
        imports.push(`import ${name} from ${JSON.stringify(`yiem-require:${specifier}`)};`);
        return name;
      });
      return { contents: imports.length ? `${imports.join("")}${contents}` : contents, loader: "ts" };
    });
    b.onResolve({ filter: /^yiem-require:/ }, ({ path }) => ({ path: requireFromRoot.resolve(path.slice("yiem-require:".length)) }));
    b.onLoad({ filter: /[\\/]node_modules[\\/]yargs[\\/]build[\\/]index\.cjs$/ }, ({ path }) => ({
      // At run time, from the installed package (`__yiemRequire`: the banner's require of each output file).
      contents: `var __yargsBuildDir = require("node:path").join(require("node:path").dirname(__yiemRequire.resolve("yargs/package.json")), "build");\n${readFileSync(path, "utf8").replaceAll("__dirname", "__yargsBuildDir")}`,
      loader: "js",
    }));
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
  banner: { js: 'import { createRequire as __yiemCreateRequire } from "node:module"; const __yiemRequire = __yiemCreateRequire(import.meta.url); const require = __yiemRequire;' },
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
 * yiem sources bundled into it, and the files it imports statically (loaded with it; every other
 * file is loaded by an `import()` on first use). test/startup.test.ts reads it to name the chunks
 * a command loaded.
 */
const files = {};
for (const [file, output] of Object.entries(result.metafile.outputs)) {
  if (file.endsWith(".map")) continue;
  const inputs = Object.keys(output.inputs);
  const packages = [...new Set(inputs.map((i) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(i)?.[1]).filter(Boolean))].sort();
  const sources = inputs.filter((i) => i.startsWith("src/")).sort();
  const name = (path) => relative(outdir, `${root}${path}`).replaceAll("\\", "/");
  const staticImports = output.imports.filter((i) => i.kind === "import-statement" && !i.external).map((i) => name(i.path)).sort();
  files[name(file)] = { packages, sources, staticImports };
}
writeFileSync(`${outdir}/manifest.json`, `${JSON.stringify({ entryPoints: ENTRY_POINTS, files }, null, 2)}\n`);

if (process.argv.includes("--report")) {
  for (const [file, { bytes }] of Object.entries(result.metafile.outputs)) if (!file.endsWith(".map")) process.stdout.write(`${(bytes / 1024).toFixed(0).padStart(6)} KB  ${file}\n`);
}
