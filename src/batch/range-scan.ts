/**
 * A range of the check pass scanned beside this thread (./id-scan.ts): on a worker thread
 * (scan-worker.cjs next to the CLI bundle, or scan-worker.js next to this module when built),
 * else, where there is no worker file (the sources run as TypeScript), in this thread, its reads
 * interleaved with the caller's.
 *
 * Rules:
 * - A worker's failure rejects `result` with an Error of the same message; `cancel` ends the
 *   worker (an aborted or failed check), and an unref'd worker never keeps the process alive.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { scanIdRange, type IdScanRequest, type IdScanResult } from "./id-scan.js";
import type { ByteRange } from "./lines.js";

export interface RangeScan {
  range: ByteRange;
  partitions: number;
  result: Promise<IdScanResult>;
  cancel(): void;
}

/** The worker's entry file, or undefined when there is none (see module rules). */
function workerFile(): string | undefined {
  const here = import.meta.url;
  for (const name of ["./scan-worker.cjs", "./scan-worker.js"]) {
    if (name.endsWith(".js") && !here.endsWith(".js")) continue;
    const file = fileURLToPath(new URL(name, here));
    if (existsSync(file)) return file;
  }
  return undefined;
}

export function startRangeScan(request: IdScanRequest): RangeScan {
  const file = workerFile();
  if (!file) {
    const result = scanIdRange(request);
    result.catch(() => {});
    return { range: request.range, partitions: request.partitions, result, cancel: () => {} };
  }
  const worker = new Worker(file, { workerData: request });
  worker.unref();
  const result = new Promise<IdScanResult>((resolve, reject) => {
    worker.once("message", (message: { result?: IdScanResult; error?: string }) => (message.result ? resolve(message.result) : reject(new Error(message.error))));
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the check pass's worker for bytes ${request.range.start}..${request.range.end} of the input stopped (exit code ${code})`)));
  });
  result.catch(() => {});
  return { range: request.range, partitions: request.partitions, result, cancel: () => void worker.terminate() };
}
