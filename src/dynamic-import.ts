/**
 * The one dynamic `import()` of yiem's own code for a URL known only at run time (a tool file's
 * ES module dependency, the source library in tests). Rule: yiem's CommonJS bundle is compiled
 * as a vm.Script with a V8 code cache (src/code-cache.ts), and Node 20 loses the dynamic-import
 * callback of a script deserialized from a code cache ("A dynamic import callback was not
 * specified"), so the bundle calls no `import()` itself: scripts/bundle.mjs keeps this module out
 * of it (in dist/bundle/start.cjs, compiled by Node's own loader, where `import()` works).
 */
export function importModule(url: string): Promise<Record<string, unknown>> {
  return import(url) as Promise<Record<string, unknown>>;
}
