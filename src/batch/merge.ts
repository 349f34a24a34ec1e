/**
 * `yiem batch merge`: the shards' results joined into one file (docs/batch.md, "Merge").
 *
 * Rules:
 * - Each file is read streamed; a line that is not a result (a torn last line included) is a
 *   problem naming the file and line.
 * - A final result (types.ts FINAL_STATUSES) of an id is written once, as it was, in the order
 *   the files and lines are given; a second final result of the same id is a duplicate (both
 *   places named) and is not written. An id with only an `aborted` result is missing.
 * - With the input: every line of it must have a final result, under its id (as the batch reads
 *   it, ./runner.ts) or under its `line:N` (the batch records a line whose item it could not
 *   prepare, e.g. a template placeholder without a value, as a bad line: merge has no spec to
 *   tell); a result whose id is neither is unknown. A `line:N` result of a line whose own id has
 *   a final result too (the line was fixed and the batch resumed) is superseded: not written.
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

/** Each line of `files` as a result's id and status, or why it is not a result (blank lines left out). */
async function* resultLines(files: string[]): AsyncGenerator<{ file: string; line: number; text: string; key: { id: string; status: string } } | { problem: string }> {
  for (const file of files) {
    for await (const line of readTextLines(file)) {
      if ("tooLong" in line) {
        yield { problem: `${file} line ${line.line}: the line is too long` };
        continue;
      }
      if (line.text.trim() === "") continue;
      try {
        yield { file, line: line.line, text: line.text, key: resultKey(file, line.line, line.text) };
      } catch (error) {
        yield { problem: (error as Error).message };
      }
    }
  }
}

/**
 * What the input says of the results (see module rules): the ids it knows (its items' and every
 * line's `line:N`), the input ids with no final result, and the `line:N` results superseded by
 * their line's own id.
 */
async function checkAgainstInput(input: string, finalIds: ReadonlySet<string>, report: MergeReport): Promise<{ known: Set<string>; superseded: Set<string> }> {
  const known = new Set<string>();
  const superseded = new Set<string>();
  for await (const entry of entries({ file: input, prepare: () => {} })) {
    const id = idOf(entry);
    const lineKey = "item" in entry ? `line:${entry.item.line}` : id;
    known.add(id).add(lineKey);
    const own = finalIds.has(id);
    if (own && lineKey !== id && finalIds.has(lineKey)) superseded.add(lineKey);
    if (!own && !finalIds.has(lineKey)) report.missingCount = listed(report.missing, report.missingCount, id);
  }
  return { known, superseded };
}

export async function mergeResults(files: string[], output: string, input?: string): Promise<MergeReport> {
  const report: MergeReport = { files: files.length, results: 0, missing: [], missingCount: 0, duplicates: [], duplicateCount: 0, unknown: [], unknownCount: 0, badLines: [], badLineCount: 0, complete: false };
  let against: { known: Set<string>; superseded: Set<string> } | undefined;
  if (input !== undefined) {
    const finalIds = new Set<string>();
    for await (const entry of resultLines(files)) if ("key" in entry && FINAL_STATUSES.has(entry.key.status as never)) finalIds.add(entry.key.id);
    against = await checkAgainstInput(input, finalIds, report);
  }
  const where = new Map<string, string>();
  const aborted = new Set<string>();
  const temp = atomicTempPath(output);
  const out = createWriteStream(temp, { flags: "wx", mode: 0o644 });
  try {
    for await (const entry of resultLines(files)) {
      if ("problem" in entry) {
        report.badLineCount = listed(report.badLines, report.badLineCount, entry.problem);
        continue;
      }
      const { key } = entry;
      if (!FINAL_STATUSES.has(key.status as never)) {
        aborted.add(key.id);
        continue;
      }
      if (against?.superseded.has(key.id)) continue;
      const here = `${entry.file} line ${entry.line}`;
      const first = where.get(key.id);
      if (first !== undefined) {
        report.duplicateCount = listed(report.duplicates, report.duplicateCount, `${key.id} (${first}; ${here})`);
        continue;
      }
      where.set(key.id, here);
      report.results++;
      if (!out.write(`${entry.text}\n`)) await once(out, "drain");
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
  if (against) {
    for (const id of where.keys()) if (!against.known.has(id)) report.unknownCount = listed(report.unknown, report.unknownCount, id);
  } else {
    for (const id of aborted) if (!where.has(id)) report.missingCount = listed(report.missing, report.missingCount, id);
  }
  report.complete = report.missingCount + report.duplicateCount + report.unknownCount + report.badLineCount === 0;
  return report;
}
