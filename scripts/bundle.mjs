#!/usr/bin/env node
/**
 * `npm run build`, step 2 (after tsc): the bundled runtime in dist/bundle/ (docs/performance.md,
 * "The bundle" and "The code cache"). Rules:
 * - `yiem.cjs`: all of yiem's own code in ONE CommonJS bundle (entry: the CLI's `main` and
 *   `processIo`, src/cli/bin-entry.ts, plus the library, src/index.ts, as `library` and the tool
 *   kit, src/tools/define.ts, as `toolKit`), so there is one instance of every yiem module in a
 *   process. bin/yiem.js loads it through `start.cjs` as a vm.Script with a V8 code cache
 *   (src/code-cache.ts). yiem's own `import()`s stay lazy inside it (esbuild evaluates such a
 *   module on first use); yargs is bundled (its CommonJS build, as Node's `require` resolves it;
 *   its locale folder is found in the node_modules folders Node would search);
 * - `vendor/<name>.cjs`: each package yiem imports with `import()` (openai, yaml, execa, the MCP
 *   client and server SDKs: `VENDOR`) as a CommonJS bundle of its own with its dependencies,
 *   loaded on first use through the same cached loader (`__yiemVendor`); they hold no yiem state.
 *   An `import()` of any other package fails the build. ajv and ajv-formats (loaded with
 *   `requireCjs`) are a vendor bundle too, taken synchronously (`__yiemVendorSync`); sucrase (a
 *   cold tool cache only) stays in node_modules. The openai bundle is built with yiem's
 *   `Headers` (src/provider/http/headers.ts, through esbuild's `inject`) in the place of the
 *   global one, whose first use loads Node's whole fetch implementation (undici): the model
 *   client's requests go through src/provider/http/node-fetch.ts instead;
 * - `start.cjs`: the loader (src/code-cache.ts) and the modules it needs (`SHARED`: the cache
 *   folder, the signed cache files, atomic writes, the package root, `importModule`; and what
 *   starts `yiem batch`'s check worker before the CLI loads, src/cli/early-scan.ts), required by
 *   bin/yiem.js with Node's own loader. yiem.cjs requires those modules from it instead of
 *   bundling them again (one instance). It knows every bundle's content hash (part of the cache
 *   entry's name);
 * - no output may call `import()` (a script deserialized from a code cache has no dynamic-import
 *   callback in Node 20, src/dynamic-import.ts): checked here; every output is ASCII (esbuild's
 *   default escaping; checked here too), so src/code-cache.ts reads a bundle as Latin-1;
 * - `index.cjs` and `tool-kit.cjs` are the library and the tool kit of that one instance
 *   (src/tools/modules/interop.ts hands them to tool files as `yiem`), and dist/index.js (the
 *   package's `exports` entry) is rewritten to re-export the library's names from `index.cjs`, so
 *   `import … from "yiem"` anywhere gets the same instances; its types stay tsc's dist/index.d.ts;
 * - source maps (`*.map`, linked) point at src/; bin/yiem.js enables them for `--debug` only, and
 *   then loads the bundles with plain `require` so Node maps stack traces;
 * - whitespace and syntax are minified (names are kept: error classes, `function.name`): the
 *   source is read, hashed by V8 and parsed where the cache lacks a function (~25% less source,
 *   measured in docs/performance.md); yiem.cjs, read at every start, has its local names
 *   minified too (`keepNames`: functions and classes keep their `name`, so stack traces and
 *   error names read as before), another ~23% less (680 → 521 KB). The vendor bundles keep their
 *   local names (they are read only when a command uses them, and the packages are not ours to
 *   second-guess).
 */
import { createHash } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { build } from "esbuild";
import { specValidatorSource } from "./spec-validator.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const outdir = `${root}dist/bundle`;
const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8"));
const target = `node${pkg.engines.node.replace(/^>=/, "")}`;

/** The CLI entry (src/cli/bin-entry.ts) and the library of the one bundle. interop.ts knows `index.cjs` and `tool-kit.cjs`. */
export const ENTRY_POINTS = { cli: "src/cli/bin-entry.ts", index: "src/index.ts", "tool-kit": "src/tools/define.ts" };

/** The module name src/config/validate.ts requires the build's spec validator by; no package has it. */
const SPEC_VALIDATOR = "yiem:spec-validator";

/** The vendor bundles: name → the packages in it (an `import("pkg")` gets `default[pkg]`, its namespace). */
export const VENDOR = {
  openai: ["openai"],
  // Loaded with `requireCjs` (synchronously; see REQUIRED_VENDOR): `default[pkg]` is the package's module.exports.
  ajv: ["ajv", "ajv-formats"],
  yaml: ["yaml"],
  execa: ["execa"],
  "mcp-client": ["@modelcontextprotocol/client"],
  "mcp-server": ["@modelcontextprotocol/server", "@modelcontextprotocol/server/stdio"],
  // The spec's validator compiled here (scripts/spec-validator.mjs), loaded with `requireCjs` by src/config/validate.ts.
  "spec-validator": [SPEC_VALIDATOR],
};
const vendorOf = Object.fromEntries(Object.entries(VENDOR).flatMap(([name, pkgs]) => pkgs.map((p) => [p, name])));

/** yiem modules that live in start.cjs only (the loader and what it imports); yiem.cjs requires them from there. */
export const SHARED = ["src/cache-dir.ts", "src/regular-file.ts", "src/package-info.ts", "src/atomic-write.ts", "src/dynamic-import.ts", "src/code-cache.ts", "src/name-hash.ts", "src/project-folder.ts", "src/channels/process-streams.ts", "src/checksum.ts", "src/cache-prune.ts", "src/random-id.ts", "src/cli/command-word.ts", "src/cli/early-scan.ts", "src/batch/range-plan.ts", "src/batch/range-worker.ts", "src/batch/line-limit.ts"];

/** Packages loaded with `requireCjs` at run time that stay in node_modules (named so esbuild never inlines them). */
const EXTERNAL = ["sucrase", "sucrase/*"];

/** `requireCjs("…")` calls made bundled requires of the package's CommonJS build (see `yiemSources`). */
const BUNDLED_REQUIRES = ["yargs/yargs"];
/** Vendor bundles whose packages yiem loads with `requireCjs` (`__yiemVendorSync`, module.exports as Node's `require` gives it). */
const REQUIRED_VENDOR = ["ajv", "spec-validator"];
const REQUIRE_CJS_CALL = /\brequireCjs\(\s*"([^"]+)"\s*\)/g;
const requireFromRoot = createRequire(`${root}package.json`);

/**
 * What yargs' build uses of `assert` (`notStrictEqual` and `strictEqual`, with `Object.is` as
 * node:assert compares), so the bundle never loads node:assert; a failed check throws a plain
 * Error with a message like node:assert's (yargs passes none and checks for no AssertionError).
 */
const YARGS_ASSERT = [
  "var __yargsAssert = {",
  "notStrictEqual(actual, expected, message) { if (Object.is(actual, expected)) throw new Error(message ?? `Expected \"actual\" to be strictly unequal to: ${String(expected)}`); },",
  "strictEqual(actual, expected, message) { if (!Object.is(actual, expected)) throw new Error(message ?? `Expected values to be strictly equal:\\n\\n${String(actual)} !== ${String(expected)}\\n`); },",
  "};",
].join(" ");

/**
 * Built-ins that yiem's own modules import at their top but that a start may never use: an
 * import of one becomes an object of getters that loads the built-in on first use (node:crypto
 * and its ~20 internal modules, fs/promises with readline and the fs watchers: a few ms of every
 * start; docs/performance.md). The names are the build's Node's (src/ is typed against them).
 */
const LAZY_BUILTINS = ["node:crypto", "node:fs/promises", "node:stream/promises", "node:timers/promises"];
const lazyBuiltins = {
  name: "yiem-lazy-builtins",
  setup(b) {
    const namespace = "yiem-lazy-builtin";
    b.onResolve({ filter: /^node:/ }, ({ path, namespace: from }) => (from !== namespace && LAZY_BUILTINS.includes(path) ? { path, namespace } : undefined));
    b.onLoad({ filter: /.*/, namespace }, ({ path }) => {
      // Own names, not only enumerable ones (zlib's constants, crypto's deprecated functions are not).
      const getters = Object.getOwnPropertyNames(requireFromRoot(path)).filter((name) => name !== "default").map((name) => `${JSON.stringify(name)}: { get: () => load()[${JSON.stringify(name)}], enumerable: true }`);
      return { contents: `let loaded; const load = () => (loaded ??= require(${JSON.stringify(path)})); module.exports = Object.defineProperties({}, { ${getters.join(", ")} });`, loader: "js" };
    });
  },
};

/** yargs' platform shim reads the terminal width when it loads; the bundle reads it when yargs wraps help text (the same value, later). */
const YARGS_COLUMNS = "stdColumns:void 0!==process.stdout.columns?process.stdout.columns:null";
const YARGS_COLUMNS_LAZY = "get stdColumns(){return void 0!==process.stdout.columns?process.stdout.columns:null}";

/** `text` with its one occurrence of `find` replaced; throws when there is not exactly one (a package changed under the build). */
function replaceOnce(text, find, replacement) {
  const at = text.indexOf(find);
  if (at < 0 || text.indexOf(find, at + 1) >= 0) throw new Error(`bundle: expected exactly one ${find} to replace`);
  return text.slice(0, at) + replacement + text.slice(at + find.length);
}

/** `import("…")` of a package, outside type positions (`typeof import(…)`, `import("x").Name`). */
const PACKAGE_IMPORT = /(?<!typeof\s*)\bimport\(\s*"([^".][^"]*)"\s*\)(?!\s*\.\s*(?!then\b|catch\b|finally\b)[A-Za-z_$])/g;

/** Every CommonJS output: `import.meta.url` is the file's own URL (as for the ES modules of src/). */
const COMMON = {
  absWorkingDir: root,
  bundle: true,
  format: "cjs",
  platform: "node",
  target,
  external: EXTERNAL,
  sourcemap: "linked",
  // Paths in the maps relative to the map file (../../src/…); the sources themselves are not copied in.
  sourcesContent: false,
  legalComments: "none",
  logLevel: "warning",
  metafile: true,
  outExtension: { ".js": ".cjs" },
  minifyWhitespace: true,
  minifySyntax: true,
  define: { "import.meta.url": "__yiemMetaUrl" },
};
const META_URL = 'var __yiemMetaUrl = require("node:url").pathToFileURL(__filename).href;';

/** A module made of `contents` (resolved from the repository root). */
const virtual = (name, contents) => ({
  name,
  setup(b) {
    b.onResolve({ filter: new RegExp(`^${name}:`) }, ({ path }) => ({ path, namespace: name }));
    b.onLoad({ filter: /.*/, namespace: name }, ({ path }) => ({ contents: contents(path.slice(name.length + 1)), resolveDir: root, loader: "ts" }));
  },
});

/**
 * yiem's sources (src/**.ts) for yiem.cjs:
 * - `import("pkg")` of a VENDOR package becomes `__yiemVendor("<bundle>", "pkg")` (a promise of
 *   the package's namespace, loaded through start.cjs);
 * - `requireCjs("pkg")` of a package in BUNDLED_REQUIRES becomes a `require` of the file Node's
 *   `require` would load, where the call is, so it is bundled and runs on first use; yargs'
 *   `__dirname` (where it reads its locale files) becomes its folder in node_modules;
 * - the SHARED modules resolve to start.cjs (external).
 */
const yiemSources = {
  name: "yiem-sources",
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, ({ path }) => {
      const contents = readFileSync(path, "utf8").replace(PACKAGE_IMPORT, (whole, specifier) => {
        // Other packages are left alone (a mention in a comment); a real call then fails the no-`import()` check.
        if (!vendorOf[specifier]) return whole;
        return `__yiemVendor(${JSON.stringify(vendorOf[specifier])}, ${JSON.stringify(specifier)})`;
      }).replace(REQUIRE_CJS_CALL, (whole, specifier) => {
        if (REQUIRED_VENDOR.includes(vendorOf[specifier])) return `__yiemVendorSync(${JSON.stringify(vendorOf[specifier])}, ${JSON.stringify(specifier)})`;
        if (!BUNDLED_REQUIRES.includes(specifier)) return whole;
        // A require where the call is, not an import: the package's module runs when yiem first
        // asks for it (yargs: not at all when the parse comes from src/cli/parse-cache.ts).
        return `require(${JSON.stringify(`yiem-require:${specifier}`)})`;
      });
      return { contents, loader: "ts" };
    });
    b.onResolve({ filter: /^\./ }, ({ path, resolveDir, importer }) => {
      if (!importer.includes(`${root}src`)) return undefined;
      const file = relative(root, resolve(resolveDir, path)).replaceAll("\\", "/").replace(/\.js$/, ".ts");
      return SHARED.includes(file) ? { path: "./start.cjs", external: true } : undefined;
    });
    b.onResolve({ filter: /^yiem-require:/ }, ({ path }) => ({ path: requireFromRoot.resolve(path.slice("yiem-require:".length)) }));
    b.onLoad({ filter: /[\\/]node_modules[\\/]yargs[\\/]build[\\/]index\.cjs$/ }, ({ path }) => ({
      // At run time, from the installed package (`__yiemRequire`: the bundle's own require).
      // Found the way Node looks for a package (its node_modules folders), not with `require.resolve`:
      // yargs' package.json has `exports`, and resolving through them compiles Node's ES module
      // resolver (~3 ms of every start). Not found: y18n then finds no locale files and speaks English.
      // Its `require("assert")` (two checks of yargs' own state) becomes YARGS_ASSERT: node:assert
      // and the 4 modules it loads cost every start ~2 ms (docs/performance.md). Its platform
      // shim's terminal width becomes a getter (YARGS_COLUMNS_LAZY): read at load, it built
      // process.stdout, and with it net, tty and the stream modules, at every start.
      contents: `var __yargsBuildDir = (() => { const { join } = require("node:path"); const { existsSync } = require("node:fs"); for (const dir of __yiemRequire.resolve.paths("yargs") ?? []) if (existsSync(join(dir, "yargs", "package.json"))) return join(dir, "yargs", "build"); return join(__dirname, "yargs-not-found"); })();\n${YARGS_ASSERT}\n${replaceOnce(replaceOnce(readFileSync(path, "utf8").replaceAll("__dirname", "__yargsBuildDir"), 'require("assert")', "__yargsAssert"), YARGS_COLUMNS, YARGS_COLUMNS_LAZY)}`,
      loader: "js",
    }));
  },
};

rmSync(outdir, { recursive: true, force: true });

/** A package's `import("node:…")` becomes `__yiemBuiltin("node:…")`: the same namespace, through `require` (no `import()`, rules above). */
// Double quotes only: a package's messages quote `import('node:…')` in single quotes inside strings.
const BUILTIN_IMPORT = /\bimport\(\s*"(node:[a-z_/]+)"\s*\)/g;
const builtinImports = {
  name: "yiem-builtin-imports",
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/].*\.[cm]?js$/ }, ({ path }) => {
      const source = readFileSync(path, "utf8");
      if (!source.includes("import(")) return undefined;
      return { contents: source.replace(BUILTIN_IMPORT, (_whole, id) => `__yiemBuiltin(${JSON.stringify(id)})`), loader: "js" };
    });
  },
};

/**
 * The vendor bundles `names`, built with `extra` options. The openai bundle is built apart, with
 * `VENDOR_GLOBALS` in the place of the globals it names (src/provider/http/vendor-globals.ts: its
 * `new Headers()` never loads Node's fetch); the other vendor bundles keep the real globals.
 */
const buildVendor = (names, extra = {}) =>
  build({
    ...COMMON,
    ...extra,
    entryPoints: Object.fromEntries(names.map((name) => [name, `yiem-vendor:${name}`])),
    outdir: `${outdir}/vendor`,
    banner: { js: `${META_URL} var __yiemBuiltin = (id) => new Promise((ok) => { const m = require(id); ok({ ...m, default: m }); });` },
    plugins: [virtual("yiem-vendor", (name) => {
      const pkgs = VENDOR[name];
      if (REQUIRED_VENDOR.includes(name)) return `module.exports = { default: { ${pkgs.map((p) => `${JSON.stringify(p)}: require(${JSON.stringify(p)})`).join(", ")} } };`;
      return `${pkgs.map((p, i) => `import * as m${i} from ${JSON.stringify(p)};`).join("")}export default { ${pkgs.map((p, i) => `${JSON.stringify(p)}: m${i}`).join(", ")} };`;
    }), builtinImports, specValidator],
  });

/** `require(SPEC_VALIDATOR)` in the vendor bundle: the validator's source (its `require`s of ajv's run-time helpers bundled from node_modules). */
const specValidatorCode = await specValidatorSource();
const specValidator = {
  name: "yiem-spec-validator",
  setup(b) {
    b.onResolve({ filter: new RegExp(`^${SPEC_VALIDATOR}$`) }, ({ path }) => ({ path, namespace: "yiem-spec-validator" }));
    b.onLoad({ filter: /.*/, namespace: "yiem-spec-validator" }, () => ({ contents: specValidatorCode, resolveDir: root, loader: "js" }));
  },
};
/** The vendor bundles built with yiem's stand-ins for some globals, and the file that exports them. */
const VENDOR_GLOBALS = { bundles: ["openai"], inject: "src/provider/http/vendor-globals.ts" };
const vendorBuilds = await Promise.all([
  buildVendor(Object.keys(VENDOR).filter((name) => !VENDOR_GLOBALS.bundles.includes(name))),
  buildVendor(VENDOR_GLOBALS.bundles, { inject: [VENDOR_GLOBALS.inject] }),
]);
/** Both vendor builds as one result: their outputs. */
const vendor = { metafile: { outputs: Object.assign({}, ...vendorBuilds.map((result) => result.metafile.outputs)) } };

const main = await build({
  ...COMMON,
  minifyIdentifiers: true,
  keepNames: true,
  entryPoints: { yiem: "yiem-entry:" },
  outdir,
  banner: {
    js: [
      META_URL,
      "var __yiemRequire = require;",
      "var __yiemVendor = (name, pkg) => new Promise((ok) => ok(require(\"./start.cjs\").loadVendor(name).default[pkg]));",
      "var __yiemVendorSync = (name, pkg) => require(\"./start.cjs\").loadVendor(name).default[pkg];",
    ].join(" "),
  },
  plugins: [
    lazyBuiltins,
    virtual("yiem-entry", () => `export { main, processIo } from "./${ENTRY_POINTS.cli}"; export * as library from "./${ENTRY_POINTS.index}"; export * as toolKit from "./${ENTRY_POINTS["tool-kit"]}";`),
    yiemSources,
  ],
});

// src/config/validate.ts names the validator by a literal (REQUIRE_CJS_CALL): a changed name would silently compile the schema at every cold start.
if (!readFileSync(`${outdir}/yiem.cjs`, "utf8").includes(`__yiemVendorSync("spec-validator",${JSON.stringify(SPEC_VALIDATOR)})`)) throw new Error(`yiem.cjs does not load the spec validator: src/config/validate.ts must call requireCjs(${JSON.stringify(SPEC_VALIDATOR)})`);

/** Content hashes of the bundles start.cjs loads (relative to dist/bundle/), part of each code cache entry's name. */
const hashes = {};
for (const file of [...Object.keys(main.metafile.outputs), ...Object.keys(vendor.metafile.outputs)]) {
  if (file.endsWith(".map")) continue;
  hashes[relative(outdir, `${root}${file}`)] = createHash("sha256").update(readFileSync(`${root}${file}`)).digest("hex");
}

const start = await build({
  ...COMMON,
  entryPoints: { start: "yiem-start:" },
  outdir,
  banner: { js: META_URL },
  plugins: [lazyBuiltins, virtual("yiem-start", () => [
    ...SHARED.map((file) => `export * from "./${file}";`),
    'import { join } from "node:path";',
    `import { loadBundle } from "./src/code-cache.ts";`,
    `const HASHES = ${JSON.stringify(hashes)};`,
    "/** The one instance of yiem (dist/bundle/yiem.cjs). */",
    'export function loadYiem() { return loadBundle(join(__dirname, "yiem.cjs"), HASHES["yiem.cjs"]); }',
    "/** The vendor bundle `name` (dist/bundle/vendor/<name>.cjs). */",
    'export function loadVendor(name) { return loadBundle(join(__dirname, "vendor", `${name}.cjs`), HASHES[`vendor/${name}.cjs`]); }',
  ].join("\n"))],
});

/** scan-worker.cjs: the check pass's worker thread (src/batch/scan-worker.ts, started by src/batch/range-worker.ts), a small bundle of its own that Node's loader runs. */
const scanWorker = await build({ ...COMMON, entryPoints: { "scan-worker": "src/batch/scan-worker.ts" }, outdir, banner: { js: META_URL } });

// Every output is ASCII (esbuild escapes the rest): src/code-cache.ts reads a bundle's bytes as its characters.
for (const result of [main, vendor, start, scanWorker]) {
  for (const file of Object.keys(result.metafile.outputs).filter((name) => !name.endsWith(".map"))) {
    const bytes = readFileSync(`${root}${file}`);
    const at = bytes.findIndex((byte) => byte > 0x7f);
    if (at >= 0) throw new Error(`${file} is not ASCII (byte ${at}): src/code-cache.ts reads bundles as Latin-1`);
  }
}

// No output loaded as a vm.Script calls import() (see the rules above); start.cjs is compiled by Node's loader.
for (const result of [main, vendor, scanWorker]) {
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    const dynamic = output.imports.filter((i) => i.kind === "dynamic-import");
    if (dynamic.length) throw new Error(`${file} calls import(): ${dynamic.map((i) => i.path).join(", ")}`);
  }
}

writeFileSync(`${outdir}/index.cjs`, '"use strict";\n// The library of the one yiem instance (scripts/bundle.mjs).\nmodule.exports = require("./start.cjs").loadYiem().library;\n');
writeFileSync(`${outdir}/tool-kit.cjs`, '"use strict";\n// The tool kit of the one yiem instance (scripts/bundle.mjs).\nmodule.exports = require("./start.cjs").loadYiem().toolKit;\n');

// The library entry of the package re-exports the names of src/index.ts from that instance.
const names = await build({ absWorkingDir: root, entryPoints: [ENTRY_POINTS.index], bundle: true, format: "esm", platform: "node", target, write: false, metafile: true, packages: "external", logLevel: "error" });
const exported = Object.values(names.metafile.outputs)[0].exports.sort();
writeFileSync(`${root}dist/index.js`, [
  "// The yiem library: the library of the bundle's one instance (scripts/bundle.mjs), so tool files",
  "// and the CLI share every module. Types: index.d.ts.",
  'import { createRequire } from "node:module";',
  'const library = createRequire(import.meta.url)("./bundle/index.cjs");',
  `export const { ${exported.join(", ")} } = library;`,
  "",
].join("\n"));
rmSync(`${root}dist/index.js.map`, { force: true });

/**
 * dist/bundle/manifest.json: for each output file (relative to dist/bundle/), the packages and the
 * yiem sources bundled into it, and the bundle files loading it loads (`staticImports`: yiem.cjs
 * requires start.cjs; the library wrappers load start.cjs and yiem.cjs; a vendor bundle is
 * loaded by an `import()` of its package on first use). test/e2e/startup.test.ts reads it to
 * name the packages a command loaded.
 */
const files = {};
const name = (path) => relative(outdir, `${root}${path}`).replaceAll("\\", "/");
for (const result of [main, vendor, start, scanWorker]) {
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    if (file.endsWith(".map")) continue;
    const inputs = Object.keys(output.inputs);
    const packages = [...new Set(inputs.map((i) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(i)?.[1]).filter(Boolean))].sort();
    const sources = inputs.filter((i) => i.startsWith("src/")).sort();
    const staticImports = output.imports.filter((i) => i.external && i.path.startsWith("./")).map((i) => relative(outdir, resolve(root, file, "..", i.path)).replaceAll("\\", "/"));
    files[name(file)] = { packages, sources, staticImports: [...new Set(staticImports)].sort(), bytes: output.bytes };
  }
}
for (const wrapper of ["index.cjs", "tool-kit.cjs"]) files[wrapper] = { packages: [], sources: [], staticImports: ["start.cjs", "yiem.cjs"], bytes: readFileSync(`${outdir}/${wrapper}`).length };
writeFileSync(`${outdir}/manifest.json`, `${JSON.stringify({ entryPoints: ENTRY_POINTS, vendor: VENDOR, shared: SHARED, files }, null, 2)}\n`);

if (process.argv.includes("--report")) {
  for (const [file, { bytes }] of Object.entries(files)) process.stdout.write(`${(bytes / 1024).toFixed(0).padStart(6)} KB  ${file}\n`);
}
