/**
 * Preload (`node --import ./bench/lib/trace-modules.mjs …`) that appends every module the process
 * loads to the file named by `YIEM_TRACE_MODULES`, one resolved URL or path per line: ES modules
 * through a resolve hook (module.register), CommonJS through Module._load, and yiem's bundles,
 * which src/code-cache.ts compiles through vm.Script (`vm <file>`, then one `bundled` line per
 * package in it, from dist/bundle/manifest.json: `bundled <root>/node_modules/<package>/ (in
 * <file>)`). Used by test/e2e/loading.test.ts and for start-up diagnosis; it changes nothing else.
 */
import { appendFileSync, readFileSync } from "node:fs";
import Module, { register } from "node:module";
import vm from "node:vm";

const out = process.env.YIEM_TRACE_MODULES;
if (out) {
  const Script = vm.Script;
  vm.Script = class extends Script {
    constructor(code, options) {
      super(code, options);
      const file = options?.filename ?? "";
      appendFileSync(out, `vm ${file}\n`);
      const bundle = /^(.*)[\\/]dist[\\/]bundle[\\/](.+)$/.exec(file);
      if (!bundle) return;
      try {
        const manifest = JSON.parse(readFileSync(`${bundle[1]}/dist/bundle/manifest.json`, "utf8"));
        for (const pkg of manifest.files[bundle[2].replaceAll("\\", "/")]?.packages ?? []) appendFileSync(out, `bundled ${bundle[1]}/node_modules/${pkg}/ (in ${bundle[2]})\n`);
      } catch {
        // no manifest: the bundle's own line says what was loaded
      }
    }
  };
  register(new URL("./trace-hooks.mjs", import.meta.url), { data: { out } });
  const load = Module._load;
  Module._load = function (request, parent, isMain) {
    let resolved = request;
    try {
      resolved = Module._resolveFilename(request, parent, isMain);
    } catch {
      // Leave it to the real loader to report.
    }
    appendFileSync(out, `cjs ${resolved}\n`);
    return load.apply(this, arguments);
  };
}
