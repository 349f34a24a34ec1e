/**
 * A range of the check pass scanned beside this thread (./range-plan.ts plans the ranges): on a
 * worker thread (./range-worker.ts), else, where there is no worker file (the sources run as
 * TypeScript), in this thread, its reads interleaved with the caller's.
 */
import { scanIdRange } from "./id-scan.js";
import type { IdScanRequest } from "./range-plan.js";
import { startWorkerScan, type RangeScan } from "./range-worker.js";

export type { RangeScan };

export function startRangeScan(request: IdScanRequest): RangeScan {
  const onWorker = startWorkerScan(request);
  if (onWorker) return onWorker;
  const result = scanIdRange(request);
  result.catch(() => {});
  return { ...request, result, cancel: () => {} };
}
