/** `yiem config [--json]`: the resolved spec with where each value came from; secrets redacted. */
import { loadSpecFromArgv } from "../setup.js";
import { EXIT } from "../exit-codes.js";
import { reportUsageError } from "../errors.js";

export async function handler(argv: Record<string, unknown>): Promise<number> {
  try {
    const spec = await loadSpecFromArgv(argv, false);
    const [{ redactSpec }, { printJson, printText }] = await Promise.all([import("../../config/redact.js"), import("../output.js")]);
    const view = { ...redactSpec(spec), sources: spec.sources };
    if (argv.json) {
      await printJson(view);
    } else {
      const { stringify } = await import("yaml");
      await printText(stringify(view).trimEnd());
    }
    return EXIT.ok;
  } catch (error) {
    const name = (error as Error).name;
    reportUsageError((error as Error).message);
    if (argv.debug && error instanceof Error && error.stack) reportUsageError(error.stack);
    return name === "ConfigError" || name === "UsageError" ? EXIT.usage : EXIT.failure;
  }
}
