/** `yiem config [--json]`: the resolved spec with where each value came from; secrets redacted. */
import { loadSpecFromArgv } from "../setup.js";
import { EXIT } from "../exit-codes.js";
import { reportUsageError } from "../errors.js";
import type { CliIo } from "../io.js";
import { exitCodeForError } from "../exit-codes.js";

export async function handler(argv: Record<string, unknown>, io: CliIo): Promise<number> {
  try {
    const spec = await loadSpecFromArgv(argv, io, false);
    const [{ redactSpec }, { printJson, printText }] = await Promise.all([import("../../config/redact.js"), import("../output.js")]);
    const view = { ...redactSpec(spec, io.env), sources: spec.sources };
    if (argv.json) {
      await printJson(view, io.stdout);
    } else {
      const { stringify } = await import("yaml");
      await printText(stringify(view).trimEnd(), io.stdout);
    }
    return EXIT.ok;
  } catch (error) {
    reportUsageError(io, (error as Error).message);
    if (argv.debug && error instanceof Error && error.stack) reportUsageError(io, error.stack);
    return exitCodeForError(error);
  }
}
