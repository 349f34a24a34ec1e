/** User-facing errors of the CLI: a usage or config problem is exit 2 with one clear message. */
import { randomUUID } from "node:crypto";
import { printResultJsonSync, unfinishedResult } from "./output.js";
import { ownWrite } from "../channels/guard.js";
import type { CliIo } from "./io.js";

export { UsageError } from "../errors.js";

/**
 * Writes a usage error to `io.stderr` before any event sink exists: `yiem: message` as text, or,
 * for commands whose stderr is an event stream in ndjson mode, one `agentEnd` event (stopReason
 * error). With `result` (`yiem run --output json`), stdout also gets the run's one JSON result,
 * with the same runId and the given exit code.
 */
export function reportUsageError(io: Pick<CliIo, "stdout" | "stderr">, message: string, format: "text" | "ndjson" = "text", result?: { exitCode: number }): void {
  const runId = randomUUID();
  if (result) printResultJsonSync(io.stdout, unfinishedResult({ runId, stopReason: "error", error: message }), result.exitCode);
  if (format === "ndjson") {
    const event = {
      type: "agentEnd",
      runId,
      seq: 1,
      ts: new Date().toISOString(),
      stopReason: "error",
      turns: 0,
      toolCalls: 0,
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      durationMs: 0,
      error: message,
    };
    ownWrite(() => io.stderr.write(`${JSON.stringify(event)}\n`));
    return;
  }
  ownWrite(() => io.stderr.write(`yiem: ${message}\n`));
}
