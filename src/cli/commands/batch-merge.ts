/**
 * `yiem batch merge FILES… -o ALL [--input INPUT]` (docs/batch.md, "Merge"): joins the shards'
 * results (../../batch/merge.ts). stdout: the report as one JSON line; stderr: each problem as a
 * line. Exit 0 when complete, 1 when an id is missing, repeated or unknown or a line is not a
 * result, 2 for a usage error.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { messageOf } from "../../error-text.js";
import { mergeResults } from "../../batch/merge.js";
import { reportUsageError } from "../errors.js";
import { EXIT } from "../exit-codes.js";
import type { CliIo } from "../io.js";
import { sameFile, writtenFileProblem } from "../preflight.js";
import { ownWrite } from "../../channels/guard.js";

export async function handler(argv: Record<string, unknown>, io: CliIo): Promise<number> {
  const files = ((argv.files as unknown[] | undefined) ?? []).map((file) => resolve(io.cwd, String(file)));
  const problems: string[] = [];
  const output = argv.output === undefined || argv.output === "" ? undefined : resolve(io.cwd, String(argv.output));
  if (!output) problems.push("name the merged file with -o ALL.jsonl");
  else {
    const problem = writtenFileProblem(output, "merged file");
    if (problem) problems.push(problem);
    if (files.some((file) => sameFile(file, output))) problems.push(`-o ${String(argv.output)} is one of the files to merge: name another`);
  }
  const input = argv.input === undefined ? undefined : resolve(io.cwd, String(argv.input));
  if (output && input && sameFile(input, output)) problems.push(`-o ${String(argv.output)} is the --input file: name another`);
  for (const file of input ? [...files, input] : files) {
    const stats = statSync(file, { throwIfNoEntry: false });
    if (!stats) problems.push(`${file}: not found`);
    else if (!stats.isFile()) problems.push(`${file}: not a regular file`);
  }
  if (problems.length > 0) {
    reportUsageError(io, problems.join("; "));
    return EXIT.usage;
  }
  let report;
  try {
    report = await mergeResults(files, output!, input);
  } catch (error) {
    reportUsageError(io, messageOf(error));
    return EXIT.failure;
  }
  const lines = [
    ...report.badLines.map((line) => `not a result: ${line}`),
    ...report.duplicates.map((id) => `duplicate id: ${id}`),
    ...report.missing.map((id) => `missing id: ${id}`),
    ...report.unknown.map((id) => `unknown id (not in --input): ${id}`),
  ];
  const more = report.badLineCount + report.duplicateCount + report.missingCount + report.unknownCount - lines.length;
  if (more > 0) lines.push(`… and ${more} more problems (the counts are in the report on stdout)`);
  if (lines.length > 0) ownWrite(() => io.stderr.write(lines.map((line) => `yiem batch merge: ${line}\n`).join("")));
  const { printJson } = await import("../output.js");
  await printJson({ output: output!, ...report }, io.stdout, { indent: 0 });
  return report.complete ? EXIT.ok : EXIT.failure;
}
