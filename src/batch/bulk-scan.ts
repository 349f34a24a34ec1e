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
 * - For each line, in line order: `sink.span(buffer, line, a, b, start)` when its id was read
 *   from its bytes (`a`, `b`: ./id-index.ts hashIdBytes of the id; ./line-id.ts spanIdAt gives
 *   the id), else `sink.other(buffer, line, start, end, offset)`, to be read as
 *   LineVisitor.line reads it. It pushes the checkpoints of the lines it reads.
 * - `createBulkScanner` gives undefined where WebAssembly (with SIMD) cannot run: the lines are
 *   then read one by one, with the same results. The module is compiled once per thread.
 */
import { isCheckpointLine, READ_BUFFER_BYTES } from "./lines.js";
import { WASM_BASE64 } from "./wasm/id-scan.generated.js";

/** What the scan of a chunk's lines hands over, line by line (module rules). */
export interface BulkSink {
  span(buffer: Buffer, line: number, a: number, b: number, start: number): void;
  other(buffer: Buffer, line: number, start: number, end: number, offset: number): void;
}

interface IdScanExports {
  scan(start: number, stop: number, line: number, out: number, outEnd: number): number;
  records: { value: number };
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

export class BulkScanner {
  /** The LineReader's two read buffers, in this scanner's memory. */
  readonly readBuffers: readonly [Buffer, Buffer];
  private readonly memory: WasmMemory;
  private readonly scan: IdScanExports["scan"];
  private readonly written: IdScanExports["records"];
  private readonly recordsAt: number;
  private readonly records: Int32Array;

  constructor(api: WasmApi, module: WasmModule) {
    const each = READ_BUFFER_BYTES + SLACK_BYTES;
    this.recordsAt = 2 * each;
    const bytes = this.recordsAt + RECORDS * 16;
    this.memory = new api.Memory({ initial: Math.ceil(bytes / WASM_PAGE), maximum: Math.ceil(bytes / WASM_PAGE) });
    const exports = new api.Instance(module, { env: { memory: this.memory } }).exports as unknown as IdScanExports;
    this.scan = exports.scan;
    this.written = exports.records;
    const buffer = this.memory.buffer;
    this.readBuffers = [Buffer.from(buffer, 0, READ_BUFFER_BYTES), Buffer.from(buffer, each, READ_BUFFER_BYTES)];
    this.records = new Int32Array(buffer, this.recordsAt, RECORDS * 4);
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
      at = this.scan(at, end, line, this.recordsAt, this.recordsAt + RECORDS * 16);
      const count = this.written.value;
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

/** A scanner with memory of its own, or undefined where the module cannot run (module rules). */
export function createBulkScanner(): BulkScanner | undefined {
  const api = wasmApi();
  const module = api && idScanModule(api);
  if (!api || !module) return undefined;
  try {
    return new BulkScanner(api, module);
  } catch {
    return undefined;
  }
}
