const t0 = performance.now();
const { loadTools } = await import("/work/main/dist/tools/loader.js");
const t1 = performance.now();
const r = await loadTools([process.argv[2]]);
const t2 = performance.now();
console.log("import loader", (t1 - t0).toFixed(1), "loadTools", (t2 - t1).toFixed(1), r.registry.list().length, r.problems.length);
