/**
 * `yiem doctor [--base-url URL] [-m MODEL] [--json]`: probes the model server of the resolved spec
 * (../../doctor/probes.ts) and prints what works, what the server refused in its own words, and
 * the spec keys to set (../../doctor/advice.ts). Exit 0 when tool calling works (with the keys
 * it lists), 1 when it does not or the server cannot be reached, 2 on usage and spec errors.
 * Secrets are redacted from everything printed.
 */
import { secretValues } from "../../secrets.js";
import { createRedactor } from "../../redact.js";
import { modelServerURL } from "../../provider/reasoning.js";
import { reportUsageError } from "../errors.js";
import { UsageError } from "../../errors.js";
import { EXIT, exitCodeForError } from "../exit-codes.js";
import type { CliIo } from "../io.js";
import { loadSpecFromArgv } from "../setup.js";
import { formatTable, oneLine } from "../table.js";

/** Each probe waits at most this long (or the spec's model.timeoutMs when shorter). */
const PROBE_TIMEOUT_MS = 60_000;

export async function handler(argv: Record<string, unknown>, io: CliIo): Promise<number> {
  let redact = createRedactor(secretValues(io.env));
  try {
    const spec = await loadSpecFromArgv(argv, io, true);
    redact = createRedactor(secretValues(io.env, [spec.model.apiKey]));
    if (spec.model.replayFile) throw new UsageError(`yiem doctor probes a model server; the replay model ${JSON.stringify(spec.model.name)} has none (give --base-url and -m)`);
    const [{ runProbes }, { advise }, { printJson, printText }] = await Promise.all([
      import("../../doctor/probes.js"),
      import("../../doctor/advice.js"),
      import("../output.js"),
    ]);
    const baseURL = modelServerURL(spec.model.baseURL, io.env);
    const probes = await runProbes({
      baseURL: spec.model.baseURL || io.env.OPENAI_BASE_URL || "https://api.openai.com/v1",
      model: spec.model.name,
      apiKey: spec.model.apiKey,
      timeoutMs: Math.min(spec.model.timeoutMs || PROBE_TIMEOUT_MS, PROBE_TIMEOUT_MS),
    });
    const advice = advise(probes, spec.model);
    const exitCode = advice.toolCalling === "none" ? EXIT.failure : EXIT.ok;
    if (argv.json) {
      await printJson(redact({ model: spec.model.name, baseURL, toolCalling: advice.toolCalling, checks: probes, settings: advice.settings, exitCode }), io.stdout);
      return exitCode;
    }
    const width = io.stdout.columns || 120;
    const lines = [
      `yiem doctor: model ${spec.model.name} at ${baseURL}`,
      "",
      formatTable(["check", "result", "detail"], probes.map((p) => [p.label, p.result, oneLine(p.detail)]), width),
      "",
      advice.toolCalling === "none"
        ? "Tool calling does not work with this server and model: no tool call came back (see forced tool call)."
        : `Tool calling works${advice.toolCalling === "text" ? " (calls written in the text)" : ""}.`,
    ];
    if (advice.settings.length) {
      lines.push("", "Set in the spec:", ...advice.settings.map((s) => `  ${s.key}: ${String(s.value)}    # ${oneLine(s.reason)}`));
      lines.push("", "or on the command line:", `  ${advice.settings.map((s) => `--set ${s.key}=${String(s.value)}`).join(" ")}`);
    } else if (advice.toolCalling !== "none") lines.push("Nothing to set in the spec.");
    await printText(redact(lines.join("\n")), io.stdout);
    return exitCode;
  } catch (error) {
    reportUsageError(io, redact((error as Error).message));
    if (argv.debug && error instanceof Error && error.stack) reportUsageError(io, redact(error.stack));
    return exitCodeForError(error);
  }
}
