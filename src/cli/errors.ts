/** User-facing errors of the CLI: a usage or config problem is exit 2 with one clear message. */
import { randomUuid } from "../random-id.js";
import { printResultJsonSync, unfinishedResult } from "./output.js";
import { ownWrite } from "../channels/guard.js";
import type { CliIo } from "./io.js";
import { createRunFrame } from "../loop/run-frame.js";
import { workflowCommand } from "./events/github.js";

/**
 * Writes a usage error to `io.stderr` before any event sink exists: `yiem: message` as text, or,
 * for commands whose stderr is an event stream in ndjson mode, one `agentEnd` event (stopReason
 * error), or with `--events github` one `::error::` workflow command (./events/github.ts). With
 * `result` (`yiem run --output json`), stdout also gets the run's one JSON result, with the same
 * runId and the given exit code.
 */
export function reportUsageError(io: Pick<CliIo, "stdout" | "stderr">, message: string, format: "text" | "ndjson" | "github" = "text", result?: { exitCode: number }): void {
  const runId = randomUuid();
  if (result) printResultJsonSync(io.stdout, unfinishedResult({ runId, stopReason: "error", error: message }), result.exitCode);
  if (format === "ndjson") {
    // A run that never started: its frame's lone agentEnd (../loop/run-frame.ts).
    const sink = (event: object) => ownWrite(() => io.stderr.write(`${JSON.stringify(event)}\n`));
    createRunFrame({ runId, sink }).end({ stopReason: "error", durationMs: 0, error: message });
    return;
  }
  if (format === "github") {
    ownWrite(() => io.stderr.write(workflowCommand("error", message, { title: "yiem: usage error" })));
    return;
  }
  ownWrite(() => io.stderr.write(`yiem: ${message}\n`));
}
