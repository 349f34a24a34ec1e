/**
 * The flags `yiem run` and `yiem batch` share (the model, the prompt's additions, the tools and
 * their limits): one declaration for both commands. Rules:
 * - a flag means the same in both commands; where its scope differs (one prompt or every item's,
 *   the run or each item), the command gives the wording (`AgentFlagTexts`);
 * - the order here is the order `--help` lists them in.
 * Imports nothing but types: start-up cost is nil.
 */
import type { Argv } from "yargs";

/** The command's wording of the shared flags whose scope differs between run and batch. */
export interface AgentFlagTexts {
  attach: string;
  outputSchema: string;
  maxTurns: string;
  /** `yiem run`: the whole run's timeout, listed among these; batch declares its own per-item one elsewhere. */
  timeout?: string;
}

export function withAgentOptions<T>(y: Argv<T>, text: AgentFlagTexts) {
  const upToToolTimeout = y
    .option("model", { alias: "m", type: "string", describe: "Model name, or replay:FILE for the offline model" })
    .option("base-url", { type: "string", describe: "OpenAI-compatible server base URL" })
    .option("system", { type: "string", describe: "System prompt, TEXT or @FILE (replaces the spec's)" })
    .option("append-system", { type: "string", describe: "TEXT or @FILE added to the spec's system prompt, after a blank line" })
    .option("attach", { alias: "a", type: "string", describe: text.attach })
    .option("output-schema", { type: "string", describe: text.outputSchema })
    .option("tool-execution", { type: "string", choices: ["sequential", "parallel"], describe: "How one turn's tool calls run" })
    .option("max-turns", { type: "number", describe: text.maxTurns })
    .option("tool-timeout", { type: "string", describe: "Per tool call: ms or 30s, 2m" });
  const withTimeout = text.timeout === undefined ? upToToolTimeout : upToToolTimeout.option("timeout", { type: "string", describe: text.timeout });
  return withTimeout
    .option("allow-tools", { type: "string", describe: "Comma-separated name globs to allow (repeatable)" })
    .option("deny-tools", { type: "string", describe: "Comma-separated name globs to deny; deny wins (repeatable)" });
}
