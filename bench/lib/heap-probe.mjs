/**
 * Preload for the batch memory benchmark (node --expose-gc --import this): every
 * YIEM_BENCH_HEAP_EVERY_MS (default 1000) ms, and at exit, forces a full GC and appends one JSON
 * line {ms, rss, heapUsed, external, arrayBuffers} (bytes) to YIEM_BENCH_HEAP_FILE. The heap after
 * a forced GC is what is still referenced: growth per item shows there, while RSS also holds
 * what V8 has not given back yet.
 */
import { appendFileSync } from "node:fs";

const file = process.env.YIEM_BENCH_HEAP_FILE;
if (file && typeof globalThis.gc === "function") {
  const started = performance.now();
  const sample = () => {
    globalThis.gc();
    const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
    appendFileSync(file, `${JSON.stringify({ ms: Math.round(performance.now() - started), rss, heapUsed, external, arrayBuffers })}\n`);
  };
  setInterval(sample, Number(process.env.YIEM_BENCH_HEAP_EVERY_MS ?? 1000)).unref();
  // At exit: from process.reallyExit and on 'beforeExit', not from an 'exit' listener, which
  // would make yiem's exit bound start a thread (src/exit-listeners.ts) before this last sample.
  const reallyExit = process.reallyExit;
  process.reallyExit = function (code) {
    sample();
    return reallyExit.call(process, code);
  };
  process.on("beforeExit", sample);
}
