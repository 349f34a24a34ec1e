/** The error of required MCP servers that did not start: its own module, so the CLI can tell it without loading the MCP client. */
import { YiemError } from "../errors.js";
import type { AgentEventBody } from "../loop/types.js";
import type { McpStartError } from "./connection.js";

/** One or more required servers did not become ready (exit 1). */
export class McpRequiredError extends YiemError {
  constructor(
    readonly failures: McpStartError[],
    /** mcpServerError events of every failed server, in server order. */
    readonly events: AgentEventBody[],
  ) {
    super(failures.map((f) => f.message).join("\n"), "runtime");
    this.name = "McpRequiredError";
  }
}
