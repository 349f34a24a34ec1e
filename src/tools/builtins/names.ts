/** The built-in tools' names: the one list (the spec's `builtinTools`, the generator's reserved names). */
export const BUILTIN_TOOL_NAMES = ["listTools", "writeTool"] as const;

export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];
