/**
 * `yiem batch merge`: the shards' results joined into one file (docs/batch.md, "Merge").
 *
 * Rules:
 * - Each file is read streamed; a line that is not a result (a torn last line included) is a
 *   problem naming the file and line.
 * - A final result (types.ts FINAL_STATUSES) of an id is written once, as it was, in the order
 *   the files and lines are given; a second final result of the same id is a duplicate (both
 *   places named) and is not written. An id with only an `aborted` result is missing.
 * - With the input: every id of it (as the batch reads it, ./runner.ts) must have a result, and a
 *   result whose id is not in the input is unknown.
 * - The merged file is written atomically (a temporary file, then a rename), also when there are
 *   problems: the report says whether it is complete.
 */
import { createWriteStream } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { once } from "node:events";
import { atomicTempPath } from "../atomic-write.js";
import { readTextLines } from "./lines.js";
import { resultKey } from "./ledger.js";
import { entries, idOf } from "./runner.js";
import { FINAL_STATUSES } from "./types.js";

/** At most this many ids are listed per kind of problem. */
export const MAX_LISTED = 100;

export interface MergeReport {
  files: number;
  /** Results written. */
  results: number;
  /** Input ids without a final result (with --input), or ids seen only `aborted`. */
  missing: string[];
  missingCount: number;
  duplicates: string[];
  duplicateCount: number;
  /** Result ids the input does not have (with --input). */
  unknown: string[];
  unknownCount: number;
  /** Lines that are not results, `file line N: why`. */
  badLines: string[];
  badLineCount: number;
  /** True when nothing is missing, repeated, unknown or unreadable. */
  complete: boolean;
}

function listed(list: string[], count: number, value: string): number {
  if (list.length < MAX_LISTED) list.push(value);
  return count + 1;
}

export async function mergeResults(files: string[], output: string, input?: string): Promise<MergeReport> {
  const report: MergeReport = { files: files.length, results: 0, missing: [], missingCount: 0, duplicates: [], duplicateCount: 0, unknown: [], unknownCount: 0, badLines: [], badLineCount: 0, complete: false };
  const where = new Map<string, string>();
  const aborted = new Set<string>();
  const temp = atomicTempPath(output);
  const out = createWriteStream(temp, { flags: "wx", mode: 0o644 });
  try {
    for (const file of files) {
      for await (const line of readTextLines(file)) {
        if (!("tooLong" in line) && line.text.trim() === "") continue;
        let key: { id: string; status: string };
        try {
          if ("tooLong" in line) throw new Error(`${file} line ${line.line}: the line is too long`);
          key = resultKey(file, line.line, line.text);
        } catch (error) {
          report.badLineCount = listed(report.badLines, report.badLineCount, (error as Error).message);
          continue;
        }
        if (!FINAL_STATUSES.has(key.status as never)) {
          aborted.add(key.id);
          continue;
        }
        const here = `${file} line ${line.line}`;
        const first = where.get(key.id);
        if (first !== undefined) {
          report.duplicateCount = listed(report.duplicates, report.duplicateCount, `${key.id} (${first}; ${here})`);
          continue;
        }
        where.set(key.id, here);
        report.results++;
        if (!out.write(`${(line as { text: string }).text}\n`)) await once(out, "drain");
      }
    }
    out.end();
    await once(out, "finish");
    const handle = await open(temp, "r+");
    await handle.datasync().finally(() => handle.close());
    await rename(temp, output);
  } catch (error) {
    out.destroy();
    await rm(temp, { force: true });
    throw error;
  }
  if (input !== undefined) {
    const inputIds = new Set<string>();
    for await (const entry of entries({ file: input, prepare: () => {} })) {
      const id = idOf(entry);
      inputIds.add(id);
      if (!where.has(id)) report.missingCount = listed(report.missing, report.missingCount, id);
    }
    for (const id of where.keys()) if (!inputIds.has(id)) report.unknownCount = listed(report.unknown, report.unknownCount, id);
  } else {
    for (const id of aborted) if (!where.has(id)) report.missingCount = listed(report.missing, report.missingCount, id);
  }
  report.complete = report.missingCount + report.duplicateCount + report.unknownCount + report.badLineCount === 0;
  return report;
}
