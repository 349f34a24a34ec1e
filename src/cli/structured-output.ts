/**
 * The CLI side of structured output (loop/structured-output.ts): the checks `yiem run` makes
 * before the model is called, and what `--dry-run` shows of the request.
 */
import { ConfigError } from "../config/errors.js";
import type { ResolvedSpec } from "../config/types.js";
import { createStructuredOutput, FINAL_ANSWER_TOOL } from "../loop/structured-output.js";
import type { ResponseFormat, ToolSpec } from "../provider/types.js";
import { ToolRegistry } from "../tools/registry.js";

/** Tool mode offers FINAL_ANSWER_TOOL: a loaded tool of that name is exit 2, before any model call. */
export function refuseFinalAnswerClash(spec: ResolvedSpec, registry: ToolRegistry): void {
  if (spec.output?.mode !== "tool" || !registry.has(FINAL_ANSWER_TOOL)) return;
  throw new ConfigError(
    `${spec.output.from}: output.mode tool offers a tool named "${FINAL_ANSWER_TOOL}", and a loaded tool has that name: rename the tool, or use output.mode native`,
    { key: spec.output.from },
  );
}

/** The first request's tools and response format, as the run sends them (`--dry-run`). */
export function dryRunTools(spec: ResolvedSpec, tools: ToolSpec[]): { tools: ToolSpec[]; responseFormat?: ResponseFormat } {
  if (!spec.output) return { tools };
  const output = createStructuredOutput(spec.output, new ToolRegistry(), () => true);
  const added = output.registry.list().map((t) => ({ name: t.name, description: t.description, parameters: t.inputSchema }));
  return { tools: [...tools, ...added], ...(output.responseFormat ? { responseFormat: output.responseFormat } : {}) };
}
