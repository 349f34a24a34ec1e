/**
 * Preload (`node --import ./bench/lib/trace-modules.mjs …`) that appends every module the process
 * loads to the file named by `YIEM_TRACE_MODULES`, one resolved URL or path per line: ES modules
 * through a resolve hook (module.register), CommonJS through Module._load. Used by
 * test/e2e/startup.test.ts and for start-up diagnosis; it changes nothing else.
 */
import { appendFileSync } from "node:fs";
import Module, { register } from "node:module";

const out = process.env.YIEM_TRACE_MODULES;
if (out) {
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
