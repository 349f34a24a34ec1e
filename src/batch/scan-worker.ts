/**
 * The worker thread entry of the check pass's ranges (./id-scan.ts): scans the one range it is
 * given in `workerData`, posts the result (its staged arrays transferred, not copied) or
 * `{ error }` with the message, and ends. Bundled on its own (scripts/bundle.mjs: scan-worker.cjs).
 */
import { parentPort, workerData } from "node:worker_threads";
import { scanIdRange } from "./id-scan.js";
import type { IdScanRequest } from "./range-plan.js";

scanIdRange(workerData as IdScanRequest).then(
  (result) => {
    const buffers = new Set<ArrayBuffer>([result.staged.marks.buffer as ArrayBuffer, result.numberedLines.buffer as ArrayBuffer, ...result.staged.parts.map((words) => words.buffer as ArrayBuffer)]);
    parentPort!.postMessage({ result }, [...buffers]);
  },
  (error: unknown) => parentPort!.postMessage({ error: error instanceof Error ? error.message : String(error) }),
);
