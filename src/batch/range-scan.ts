/**
 * The ranges of the check pass scanned beside this thread: how a big input's bytes past the
 * first lines are shared out (`idRanges`), and each range's scan (./id-scan.ts) on a worker thread
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
import { cutAfterNewline, type ByteRange } from "./lines.js";

/** The input past `fullCheckBytes` is shared out between this thread and ID_RANGES worker threads when each share has at least this many bytes. */
export const ID_RANGE_BYTES = 64 * 1024 * 1024;
const ID_RANGES = 1;
/** This thread's share of the bytes past `fullCheckBytes` when split: less than an even share, as it parses the first lines whole and sorts its ids after its scan, while the worker starts before the spec loads (0.3, 0.4 and 0.5 measured on 1 GB of ~100 B lines once the module stages the ids itself: 0.4 was fastest, docs/performance.md). */
const OWN_SHARE = 0.4;

/**
 * The ranges scanned beside this thread: the input past `fullBytes` is shared out between this
 * thread (OWN_SHARE; it scans the start of the file too) and ID_RANGES others, evenly, each cut
 * right after a `\n` and at least `least` bytes long; none for a smaller input (or one without a
 * cut).
 */
export function idRanges(file: string, fullBytes: number, size: number, least: number): ByteRange[] {
  if (!Number.isFinite(fullBytes) || fullBytes >= size) return [];
  const count = Math.min(ID_RANGES, Math.floor((size - fullBytes) / least) - 1);
  const cuts: number[] = [];
  for (let k = 1; k <= count; k++) {
    const cut = cutAfterNewline(file, fullBytes + Math.floor((size - fullBytes) * (OWN_SHARE + ((1 - OWN_SHARE) * (k - 1)) / count)));
    if (cut !== undefined && cut < size && cut > (cuts[cuts.length - 1] ?? fullBytes)) cuts.push(cut);
  }
  return cuts.map((start, k) => ({ start, end: cuts[k + 1] ?? size }));
}

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
