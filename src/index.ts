/** The yiem library: the tool model, the loop and the providers. */
export * from "./tools/types.js";
export { defineTool, textContent, toolResult, checkToolShape, TOOL_NAME_PATTERN } from "./tools/define.js";
export { ToolRegistry, registerTool, defaultToolRegistry } from "./tools/registry.js";
export { createBuiltinTools, type BuiltinToolsContext } from "./tools/builtins/index.js";
export type { BuiltinToolName } from "./tools/builtins/names.js";
export { createListTools, formatToolTable, type ListedTool } from "./tools/builtins/listTools.js";
export { createWriteTool, type WriteToolContext, type WriteToolDetails } from "./tools/builtins/writeTool.js";
export { createToolPolicy } from "./tools/policy.js";
export { loadTools, loadToolFile, listToolFiles } from "./tools/loader.js";
export { parseToolArguments } from "./tools/arguments.js";
export { prepareArguments } from "./loop/prepare.js";
export * from "./provider/types.js";
export * from "./loop/types.js";
export { runAgent } from "./loop/run-agent.js";
export { createScriptedProvider, type ScriptedTurn, type ScriptStep, type ScriptedProvider } from "./provider/scripted.js";
export { createProvider, type ModelSettings } from "./provider/create.js";
export { createReplayProvider } from "./provider/replay.js";
export { createRecorder } from "./provider/record.js";
