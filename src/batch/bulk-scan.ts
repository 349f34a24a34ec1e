/**
 * The check pass's id-only lines read a whole chunk at a time (docs/batch.md, "How the ids are
 * read"): a WebAssembly module (./wasm/id-scan.wat) finds each line's end and reads and hashes its
 * id where ./line-id.ts IdSpanReader would read it as SPAN, ~4 times faster than doing the same
 * line by line in JavaScript; every other line is handed back to be read as before.
 *
 * Rules:
 * - A BulkScanner owns one WebAssembly memory that holds a LineReader's two read buffers
 *   (`readBuffers`, each followed by the 16 bytes the module may look at past a chunk) and the
 *   records the module writes. It reads lines in those buffers only: `lines` gives undefined
 *   for any other buffer (a long line joined in a buffer of its own), and the reader then gives
 *   the lines one by one.
 * - `lines`, for each line, in line order: `sink.span(buffer, line, a, b, start)` when its id
 *   was read from its bytes (`a`, `b`: ./id-index.ts hashIdBytes of the id; ./line-id.ts
 *   spanIdAt gives the id), else `sink.other(buffer, line, start, end, offset)`, to be read as
 *   LineVisitor.line reads it. `stageLines` stages the first kind itself, 16,384 lines at a
 *   time, and hands over the others in line order after the staged lines of their call. Both
 *   push the checkpoints of the lines they read, in line order.
 * - `createBulkScanner` gives undefined where WebAssembly (with SIMD) cannot run: the lines are
 *   then read one by one, with the same results. The module is compiled once per thread.
 */
import { CHECKPOINT_LINES, isCheckpointLine, READ_BUFFER_BYTES, type LineVisitor } from "./lines.js";
import { spanIdAt } from "./line-id.js";
import { partitionBits } from "./range-plan.js";
import type { StagedIds } from "./staged-ids.js";
import { WASM_BASE64 } from "./wasm/id-scan.generated.js";

/** What the scan of a chunk's lines hands over, line by line (module rules). */
export interface BulkSink {
  span(buffer: Buffer, line: number, a: number, b: number, start: number): void;
  other(buffer: Buffer, line: number, start: number, end: number, offset: number): void;
}

/** Where `stageLines` lets the module stage the SPAN lines itself: the StagedIds they go to, and what happens to the rest. */
export interface BulkStaging {
  ids: StagedIds;
  /** `count` more lines were staged from their bytes (their ids are not handed over). */
  spans(count: number): void;
  other: BulkSink["other"];
}

interface IdScanExports {
  scan(start: number, stop: number, line: number, out: number, outEnd: number): number;
  stage(start: number, stop: number, line: number, bits: number, lines: number, at: number): number;
  records: { value: number };
  spans: { value: number };
  others: { value: number };
  checkpoints: { value: number };
}

/** The part of the WebAssembly API used here (the project's types have no DOM library). */
interface WasmModule {
  readonly kind?: never;
}
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
  Instance: new (module: WasmModule, imports: { env: { memory: WasmMemory } }) => { exports: unknown };
}
/** The WebAssembly API of this thread, looked up when a scanner is made (absent where it is not built in). */
const wasmApi = (): WasmApi | undefined => (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

/** Bytes the module may read past the end of a range it scans (./wasm/id-scan.wat). */
const SLACK_BYTES = 16;
/** Records per call of the module (16 bytes each): a few hundred KB, written and read while in the cache. */
const RECORDS = 16 * 1024;
const WASM_PAGE = 64 * 1024;

let compiled: WasmModule | undefined;
let compileFailed = false;

/** The module, compiled on first use; undefined when this engine cannot compile it (no SIMD). */
function idScanModule(api: WasmApi): WasmModule | undefined {
  if (!compiled && !compileFailed) {
    try {
      compiled = new api.Module(Buffer.from(WASM_BASE64, "base64"));
    } catch {
      compileFailed = true;
    }
  }
  return compiled;
}

/** The checkpoints one `stage` call of RECORDS lines can meet. */
const CHECKPOINTS_PER_CALL = Math.ceil(RECORDS / CHECKPOINT_LINES) + 1;

export class BulkScanner {
  /** The LineReader's two read buffers, in this scanner's memory. */
  readonly readBuffers: readonly [Buffer, Buffer];
  private readonly memory: WasmMemory;
  private readonly exports: IdScanExports;
  private readonly recordsAt: number;
  /** `scan`'s records; `stage`'s other lines, 3 words each, in the same place. */
  private readonly records: Int32Array;
  /** `stage`'s areas (see ./wasm/id-scan.wat `stage`): the table of their addresses, and views of them. */
  private readonly tableAt: number;
  private readonly counts: Uint32Array;
  private readonly marks: Uint16Array;
  private readonly checkpoints: Int32Array;
  private readonly buckets: Uint32Array;
  private readonly bits: number;

  /** `partitions`: those of the StagedIds `stageLines` stages to (a power of two, ./range-plan.ts partitionBits). */
  constructor(api: WasmApi, module: WasmModule, readonly partitions = 1) {
    this.bits = partitionBits(partitions);
    const each = READ_BUFFER_BYTES + SLACK_BYTES;
    this.recordsAt = 2 * each;
    this.tableAt = this.recordsAt + RECORDS * 16;
    const countsAt = this.tableAt + 32;
    const marksAt = countsAt + partitions * 4;
    const checkpointsAt = marksAt + RECORDS * 2;
    const bucketsAt = checkpointsAt + CHECKPOINTS_PER_CALL * 4;
    const bytes = bucketsAt + partitions * RECORDS * 8;
    // Memory that is never written (most of the buckets of many partitions) is never faulted in.
    this.memory = new api.Memory({ initial: Math.ceil(bytes / WASM_PAGE), maximum: Math.ceil(bytes / WASM_PAGE) });
    this.exports = new api.Instance(module, { env: { memory: this.memory } }).exports as unknown as IdScanExports;
    const buffer = this.memory.buffer;
    this.readBuffers = [Buffer.from(buffer, 0, READ_BUFFER_BYTES), Buffer.from(buffer, each, READ_BUFFER_BYTES)];
    this.records = new Int32Array(buffer, this.recordsAt, RECORDS * 4);
    new Int32Array(buffer, this.tableAt, 6).set([bucketsAt, countsAt, marksAt, this.recordsAt, checkpointsAt, CHECKPOINT_LINES - 1]);
    this.counts = new Uint32Array(buffer, countsAt, partitions);
    this.marks = new Uint16Array(buffer, marksAt, RECORDS);
    this.checkpoints = new Int32Array(buffer, checkpointsAt, CHECKPOINTS_PER_CALL);
    this.buckets = new Uint32Array(buffer, bucketsAt, partitions * RECORDS * 2);
  }

  /**
   * Reads the complete lines `buffer[start..stop)` as `lines` does, but the module stages the
   * SPAN lines itself into `to.ids` (a call's pairs appended part by part, its marks copied at
   * once), counted by `to.spans`; every other line goes to `to.other`, after the SPAN lines of
   * its call (the order of a part's pairs does not matter: ./staged-ids.ts sorts them, and its
   * runs by line). How many lines, or undefined for a buffer not in this scanner's memory, a
   * StagedIds of other partitions, or lines it must not take (past its absorbed ranges).
   */
  stageLines(buffer: Buffer, start: number, stop: number, firstLine: number, base: number, checkpoints: number[], to: BulkStaging): number | undefined {
    if (buffer.buffer !== this.memory.buffer || !to.ids.takesMarksFrom(firstLine, this.partitions)) return undefined;
    const shift = buffer.byteOffset;
    const { counts, marks, records, buckets } = this;
    const end = shift + stop;
    let at = shift + start;
    let line = firstLine;
    while (at < end) {
      at = this.exports.stage(at, end, line, this.bits, RECORDS, this.tableAt);
      const spans = this.exports.spans.value;
      const others = this.exports.others.value;
      const lines = spans + others;
      for (let k = 0, met = this.exports.checkpoints.value; k < met; k++) checkpoints.push(base + this.checkpoints[k]! - shift);
      to.ids.setMarks(line, marks.subarray(0, lines));
      for (let p = 0; p < this.partitions; p++) {
        const pairs = counts[p]!;
        if (pairs > 0) to.ids.appendPairs(p, buckets.subarray(p * RECORDS * 2, p * RECORDS * 2 + pairs * 2));
      }
      if (spans > 0) to.spans(spans);
      for (let i = 0, last = others * 3; i < last; i += 3) {
        const lineStart = records[i + 1]! - shift;
        to.other(buffer, records[i]!, lineStart, records[i + 2]! - shift, base + lineStart);
      }
      line += lines;
    }
    return line - firstLine;
  }

  /**
   * Reads the complete lines `buffer[start..stop)`, the first numbered `firstLine`, `base` the
   * file offset of buffer[0] (module rules); how many lines, or undefined for a buffer not in
   * this scanner's memory.
   */
  lines(buffer: Buffer, start: number, stop: number, firstLine: number, base: number, checkpoints: number[], sink: BulkSink): number | undefined {
    if (buffer.buffer !== this.memory.buffer) return undefined;
    const shift = buffer.byteOffset;
    const records = this.records;
    const end = shift + stop;
    let at = shift + start;
    let line = firstLine;
    while (at < end) {
      at = this.exports.scan(at, end, line, this.recordsAt, this.recordsAt + RECORDS * 16);
      const count = this.exports.records.value;
      for (let i = 0, last = count * 4; i < last; i += 4) {
        const signed = records[i]!;
        const lineNumber = signed > 0 ? signed : -signed;
        const lineStart = records[i + 3]! - shift;
        if (isCheckpointLine(lineNumber)) checkpoints.push(base + lineStart);
        if (signed > 0) sink.span(buffer, lineNumber, records[i + 1]!, records[i + 2]!, lineStart);
        else sink.other(buffer, lineNumber, lineStart, records[i + 2]! - shift, base + lineStart);
      }
      line += count;
    }
    return line - firstLine;
  }
}

/**
 * The `LineVisitor.lines` of a reader of ids only, on `bulk`: the module stages each id it reads
 * into `ids` itself (`stageLines`) unless `wantIds`; then each is staged here. `counted(id,
 * lines)` counts them: one at a time with the id as a string when `wantIds`, else "" for a
 * call's `lines` lines at once. Lines the module cannot read go to `other`, as in `lines`.
 */
export function idOnlyLines(bulk: BulkScanner, ids: StagedIds, wantIds: boolean, counted: (id: string, lines: number) => void, other: BulkSink["other"]): NonNullable<LineVisitor["lines"]> {
  const sink: BulkSink = {
    span(buffer, line, a, b, start) {
      ids.stage(a, b, line);
      counted(wantIds ? spanIdAt(buffer, start) : "", 1);
    },
    other,
  };
  const staging: BulkStaging = { ids, spans: (count) => counted("", count), other };
  return (buffer, start, stop, firstLine, base, checkpoints) =>
    (wantIds ? undefined : bulk.stageLines(buffer, start, stop, firstLine, base, checkpoints, staging)) ?? bulk.lines(buffer, start, stop, firstLine, base, checkpoints, sink);
}

/** A scanner with memory of its own (for a StagedIds of `partitions`), or undefined where the module cannot run (module rules). */
export function createBulkScanner(partitions = 1): BulkScanner | undefined {
  const api = wasmApi();
  const module = api && idScanModule(api);
  if (!api || !module) return undefined;
  try {
    return new BulkScanner(api, module, partitions);
  } catch {
    return undefined;
  }
}
