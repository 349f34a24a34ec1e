/**
 * A range of the check pass scanned on a worker thread (./id-scan.ts in scan-worker.cjs next to
 * the CLI bundle, or scan-worker.js next to this module when built).
 *
 * Rules:
 * - A worker's failure rejects `result` with an Error of the same message; `cancel` ends the
 *   worker (an aborted or failed check, a scan nobody took), and an unref'd worker never keeps
 *   the process alive.
 * - Part of the start bundle (scripts/bundle.mjs SHARED, ../cli/early-scan.ts): `node:worker_threads`
 *   is loaded when a worker starts, not when this module loads.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { IdScanResult } from "./id-scan.js";
import type { IdScanRequest } from "./range-plan.js";

/** A scan started: what it scans (its request), and its result. */
export interface RangeScan extends IdScanRequest {
  result: Promise<IdScanResult>;
  cancel(): void;
}

/** The worker's entry file, or undefined when there is none (the sources run as TypeScript). */
function workerFile(): string | undefined {
  const here = import.meta.url;
  for (const name of ["./scan-worker.cjs", "./scan-worker.js"]) {
    if (name.endsWith(".js") && !here.endsWith(".js")) continue;
    const file = fileURLToPath(new URL(name, here));
    if (existsSync(file)) return file;
  }
  return undefined;
}

/** The scan of `request` on a worker thread, started now; undefined where there is no worker file. */
export function startWorkerScan(request: IdScanRequest): RangeScan | undefined {
  const file = workerFile();
  if (!file) return undefined;
  const { Worker } = process.getBuiltinModule("node:worker_threads") as typeof import("node:worker_threads");
  const worker = new Worker(file, { workerData: request });
  worker.unref();
  const result = new Promise<IdScanResult>((resolve, reject) => {
    worker.once("message", (message: { result?: IdScanResult; error?: string }) => (message.result ? resolve(message.result) : reject(new Error(message.error))));
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the check pass's worker for bytes ${request.range.start}..${request.range.end} of the input stopped (exit code ${code})`)));
  });
  result.catch(() => {});
  return { ...request, result, cancel: () => void worker.terminate() };
}
