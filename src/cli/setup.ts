/**
 * What every command needs before it works: the resolved spec (flags → overrides) and the tool
 * registry (built-ins first, then the tool folders). Shared by run, config and tools.
 */
import type { ResolvedSpec, SpecOverrides } from "../config/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { ToolLoadProblem } from "../tools/types.js";

/** Maps yargs flags to spec overrides (names as in CONTRACT §4). */
export function overridesFromArgv(argv: Record<string, unknown>): SpecOverrides {
  const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : v === undefined ? undefined : [String(v)]);
  const overrides: SpecOverrides = {};
  if (argv.model !== undefined) overrides.model = String(argv.model);
  if (argv["base-url"] !== undefined) overrides.baseURL = String(argv["base-url"]);
  if (argv.system !== undefined) overrides.system = String(argv.system);
  if (argv["tool-dir"] !== undefined) overrides.toolDirs = list(argv["tool-dir"]);
  if (argv["tool-execution"] !== undefined) overrides.toolExecution = String(argv["tool-execution"]);
  if (argv["max-turns"] !== undefined) overrides.maxTurns = argv["max-turns"] as number;
  if (argv["tool-timeout"] !== undefined) overrides.toolTimeoutMs = String(argv["tool-timeout"]);
  if (argv.timeout !== undefined) overrides.runTimeoutMs = String(argv.timeout);
  if (argv["allow-tools"] !== undefined) overrides.allowTools = list(argv["allow-tools"]);
  if (argv["deny-tools"] !== undefined) overrides.denyTools = list(argv["deny-tools"]);
  return overrides;
}

export async function loadSpecFromArgv(argv: Record<string, unknown>, requireModel: boolean): Promise<ResolvedSpec> {
  const { loadSpec } = await import("../config/load.js");
  return loadSpec({
    cwd: process.cwd(),
    configPath: argv.config === undefined ? undefined : String(argv.config),
    env: process.env,
    overrides: overridesFromArgv(argv),
    requireModel,
  });
}

export interface LoadedTools {
  registry: ToolRegistry;
  problems: ToolLoadProblem[];
}

/** Built-ins named by the spec, then every tool of the spec's folders. Problems are returned, not thrown. */
export async function loadRegistry(spec: ResolvedSpec): Promise<LoadedTools> {
  const [{ ToolRegistry }, { loadTools }, { createBuiltinTools }] = await Promise.all([
    import("../tools/registry.js"),
    import("../tools/loader.js"),
    import("../tools/builtins/index.js"),
  ]);
  const registry = new ToolRegistry();
  for (const tool of createBuiltinTools(spec.builtinTools, { registry, writeToolDir: spec.writeToolDir })) {
    registry.register(tool, { kind: "builtin" });
  }
  return loadTools(spec.toolDirs, { registry, generatedDir: spec.writeToolDir });
}
