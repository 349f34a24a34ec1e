/**
 * The id-only part of the check pass (./check-pass.ts checkInput) for one byte range of the input, so
 * that the ranges past the lines parsed whole can be scanned on the machine's other cores
 * (./scan-worker.ts), or in this thread when no worker can be started.
 *
 * Rules:
 * - A range starts right after a `\n` (./range-plan.ts cutAfterNewline) and its lines are numbered from
 *   1; the caller, who knows how many lines come before, adds that to every line number.
 * - Each line is read as the check pass reads a line past `fullCheckBytes` (`stageIdOnly`): its id
 *   staged (./staged-ids.ts), a bad line reported by its relative number. A plain or string line,
 *   whose id is its line number in the file, is only listed (`numberedLines`): the caller stages
 *   and counts it by its number in the file. The range's parts are
 *   sorted here, so the sorting runs on the worker's core too.
 * - A range scanned here has no ledger (`done`); the caller scans in its own thread when it has one.
 */
import { idOfText, InputLineError, parseItem } from "./input.js";
import { hashId, hashIdBytes, hashLineNumber } from "./id-index.js";
import { BLANK, IdSpanReader, LINE_NUMBER, SPAN } from "./line-id.js";
import { LineReader, type LineVisitor } from "./lines.js";
import { createBulkScanner, idOnlyLines } from "./bulk-scan.js";
import { shardOf } from "./shard.js";
import { StagedIds, type StagedRange } from "./staged-ids.js";
import type { IdScanRequest } from "./range-plan.js";

/** The bad lines the check pass reports in full, in all and so for each range. */
export const MAX_REPORTED = 10;

/**
 * Stages line `line`'s id as the check pass does past `fullCheckBytes`: null for a blank line, the
 * id when `wantId` (or when the line had to be parsed), else "" (a plain id, staged from its bytes).
 * Throws InputLineError for a line whose id cannot be read.
 */
export function stageIdOnly(spans: IdSpanReader, hashed: Int32Array, index: StagedIds, buffer: Buffer, start: number, end: number, line: number, base: number, wantId: boolean, numbered?: LineList): string | null {
  const kind = spans.read(buffer, start, end, base);
  if (kind === BLANK) return null;
  if (kind === LINE_NUMBER && numbered) {
    numbered.push(line);
    return null;
  }
  if (kind === SPAN || kind === LINE_NUMBER) {
    if (kind === SPAN) hashIdBytes(buffer, spans.idStart, spans.idEnd, hashed);
    else hashLineNumber(line, hashed);
    index.stage(hashed[0]!, hashed[1]!, line);
    if (!wantId) return "";
    return kind === SPAN ? buffer.toString("latin1", spans.idStart, spans.idEnd) : String(line);
  }
  const id = idOfText(buffer.toString("utf8", start, end), line);
  if (id === null) return null;
  hashId(id, hashed);
  index.stage(hashed[0]!, hashed[1]!, line);
  return id;
}

/** A growing list of line numbers. */
export class LineList {
  lines = new Uint32Array(1024);
  length = 0;

  push(line: number): void {
    if (this.length === this.lines.length) {
      const bigger = new Uint32Array(this.lines.length * 2);
      bigger.set(this.lines);
      this.lines = bigger;
    }
    this.lines[this.length++] = line;
  }
}

/** A bad line of a range, numbered within the range. */
export interface RangeProblem {
  line: number;
  reason: string;
  id?: string;
}

export interface IdScanResult {
  /** Lines of the range (blank ones too: the next range's line numbers start after them). */
  lines: number;
  /** The relative numbers of the plain and string lines (see module rules). */
  numberedLines: Uint32Array;
  /** Good lines that are not blank nor numbered, and of those the ones in this shard. */
  good: number;
  total: number;
  /** The relative numbers of every bad line (each counted by the caller as `line:N`), the first MAX_REPORTED in full. */
  badLines: number[];
  problems: RangeProblem[];
  staged: StagedRange;
  checkpoints: number[];
}

/** Scans one range (see module rules). */
export async function scanIdRange(request: IdScanRequest): Promise<IdScanResult> {
  const { shard } = request;
  const bulk = createBulkScanner(request.partitions);
  const reader = await LineReader.open(request.file, request.range, bulk ? { buffers: bulk.readBuffers } : {});
  const index = new StagedIds(() => undefined, request.partitions);
  const spans = new IdSpanReader();
  const hashed = new Int32Array(2);
  const sharded = shard !== undefined && shard.count > 1;
  const numbered = new LineList();
  const result: IdScanResult = { numberedLines: new Uint32Array(0), lines: 0, good: 0, total: 0, badLines: [], problems: [], staged: { parts: [], marks: new Uint16Array(1) }, checkpoints: reader.checkpoints };
  const bad = (error: unknown) => {
    if (!(error instanceof InputLineError)) throw error;
    result.badLines.push(error.line);
    if (result.problems.length < MAX_REPORTED) result.problems.push({ line: error.line, reason: error.reason, ...(error.id !== undefined ? { id: error.id } : {}) });
  };
  /** A good line read for its id (the id as a string only when sharded, "" otherwise). */
  const counted = (id: string, by = 1) => {
    result.good += by;
    if (!sharded || shardOf(id, shard.count) === shard.index) result.total += by;
  };
  const visitor: LineVisitor = {
    line(buffer: Buffer, start: number, end: number, line: number, offset: number) {
      let id: string | null;
      try {
        id = stageIdOnly(spans, hashed, index, buffer, start, end, line, offset - start, sharded, numbered);
      } catch (error) {
        bad(error);
        return;
      }
      if (id !== null) counted(id);
    },
    tooLong(line: number, bytes: number) {
      try {
        parseItem({ line, tooLong: bytes });
      } catch (error) {
        bad(error);
      }
    },
  };
  if (bulk) {
    // The lines whose id the module reads (./bulk-scan.ts), staged as stageIdOnly stages them (by the module itself when unsharded).
    visitor.lines = idOnlyLines(bulk, index, sharded, counted, (buffer, line, start, end, offset) => visitor.line(buffer, start, end, line, offset));
  }
  try {
    const size = request.range.end - request.range.start;
    if ((await reader.next(visitor)) && reader.lines > 0) index.expect(Math.ceil((size / Math.max(1, reader.bytesRead - request.range.start)) * reader.lines));
    while (await reader.next(visitor));
  } finally {
    await reader.close();
  }
  result.lines = reader.lines;
  result.numberedLines = numbered.lines.subarray(0, numbered.length);
  result.staged = index.exportSorted(reader.lines);
  return result;
}
