/**
 * Resolving MCP servers: the spec's `mcpServers` (unless `--no-spec-mcp`), then each
 * `--mcp-config FILE` in order (a JSON or YAML file in the `{"mcpServers": {...}}` shape of
 * `.mcp.json`). Rules (docs/mcp.md):
 * - a file given by flag is interpolated and validated like a spec (same schema, same messages);
 * - a name defined twice is an error, never a silent override;
 * - stdio needs `command` (an argv list, or a program string plus `args`), HTTP needs `url`;
 *   keys of the other transport are refused; `./` and `../` argv elements and `cwd` resolve
 *   against the defining file's folder;
 * - defaults: required true, startupTimeoutMs 30000, toolTimeoutMs = limits.toolTimeoutMs.
 * Every problem is a ConfigError (exit 2) naming the file, line and key.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { readNamedText } from "../regular-file.js";
import { parseDuration } from "./duration.js";
import { ConfigError, fileError } from "./errors.js";
import { InterpolationError, interpolateValue } from "../interpolate.js";
import { parseSpecText, type ParsedSpecFile } from "./parse.js";
import { cacheScopeOf } from "../cache-dir.js";
import type { SpecPath } from "../interpolate.js";
import {
  DEFAULT_MCP_STARTUP_TIMEOUT_MS,
  type AgentSpec,
  type McpServerSpec,
  type ResolvedMcpServer,
  type SpecOverrides,
} from "./types.js";
import { formatKey, validateSpec } from "./validate.js";

type SpecErrorFn = (message: string, specPath: SpecPath) => ConfigError;

export interface McpResolveInput {
  spec: AgentSpec;
  /** The spec file, or null without one. */
  specFile: string | null;
  baseDir: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  overrides: SpecOverrides;
  /** limits.toolTimeoutMs after flags: the default of every server's toolTimeoutMs. */
  toolTimeoutMs: number;
  specError: SpecErrorFn;
}

export async function resolveMcpServers(input: McpResolveInput): Promise<ResolvedMcpServer[]> {
  const servers: ResolvedMcpServer[] = [];
  const definedIn = new Map<string, string>();
  const add = async (name: string, entry: McpServerSpec, file: string | null, base: string, error: SpecErrorFn) => {
    const where = file ?? "the spec";
    const earlier = definedIn.get(name);
    if (earlier !== undefined) {
      throw error(`MCP server "${name}" is defined twice (${earlier} and ${where}); rename one, or use --no-spec-mcp`, ["mcpServers", name]);
    }
    definedIn.set(name, where);
    servers.push(await resolveServer(name, entry, file, base, input.toolTimeoutMs, error));
  };
  if (!input.overrides.noSpecMcp) {
    for (const [name, entry] of Object.entries(input.spec.mcpServers ?? {})) {
      await add(name, entry, input.specFile, input.baseDir, input.specError);
    }
  }
  for (const flagPath of input.overrides.mcpConfigs ?? []) {
    const { parsed, servers: entries } = await readMcpConfig(flagPath, input.cwd, input.env);
    const error: SpecErrorFn = (message, specPath) =>
      fileError(message, { file: parsed.file, line: parsed.lineOf(specPath), key: formatKey(specPath), cwd: input.cwd });
    for (const [name, entry] of Object.entries(entries)) await add(name, entry, parsed.file, path.dirname(parsed.file), error);
  }
  return servers;
}

/** A `--mcp-config` file: read, parsed (JSON or YAML by extension), interpolated, validated. */
async function readMcpConfig(
  flagPath: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ parsed: ParsedSpecFile; servers: Record<string, McpServerSpec> }> {
  const file = path.resolve(cwd, flagPath);
  const fail = (reason: string) => new ConfigError(`--mcp-config: ${flagPath} ${reason} (${file})`, { key: "--mcp-config", file });
  const scope = cacheScopeOf(env, cwd);
  const parsed = await parseSpecText(file, await readNamedText(file, fail), cwd, { scope, read: false });
  const value = parsed.value;
  if (!value || typeof value !== "object" || Array.isArray(value) || !("mcpServers" in value)) {
    throw fileError(`an MCP config file must hold {"mcpServers": {...}}`, { file, line: 1, cwd });
  }
  const extra = Object.keys(value).filter((key) => key !== "mcpServers" && key !== "$schema");
  if (extra.length > 0) {
    throw fileError(`unknown key "${extra[0]}" in an MCP config file (allowed: mcpServers)`, { file, line: parsed.lineOf([extra[0]], "key"), key: extra[0], cwd });
  }
  let interpolated: unknown;
  try {
    interpolated = interpolateValue({ mcpServers: (value as { mcpServers: unknown }).mcpServers }, env);
  } catch (error) {
    if (!(error instanceof InterpolationError)) throw error;
    const key = formatKey(error.specPath);
    throw fileError(`"${key}": ${error.message}`, { file, line: parsed.lineOf(error.specPath), key, cwd });
  }
  await validateSpec(interpolated, parsed, cwd, { cache: scope });
  return { parsed, servers: (interpolated as { mcpServers: Record<string, McpServerSpec> }).mcpServers };
}

const STDIO_ONLY = ["command", "args", "cwd", "env"] as const;

async function resolveServer(
  name: string,
  entry: McpServerSpec,
  file: string | null,
  base: string,
  defaultToolTimeoutMs: number,
  specError: SpecErrorFn,
): Promise<ResolvedMcpServer> {
  const at = (...rest: SpecPath): SpecPath => ["mcpServers", name, ...rest];
  const key = (k: string) => formatKey(at(k));
  const declared = entry.type === undefined ? undefined : entry.type === "stdio" ? "stdio" : "http";
  if (entry.command !== undefined && entry.url !== undefined) {
    throw specError(`"${formatKey(at())}" has both "command" (stdio) and "url" (HTTP); keep one`, at("url"));
  }
  const transport = declared ?? (entry.url !== undefined ? "http" : "stdio");
  const common = {
    name,
    definedIn: file,
    required: entry.required ?? true,
    startupTimeoutMs: entry.startupTimeoutMs === undefined ? DEFAULT_MCP_STARTUP_TIMEOUT_MS : parseDuration(entry.startupTimeoutMs),
    toolTimeoutMs: entry.toolTimeoutMs === undefined ? defaultToolTimeoutMs : Math.round(parseDuration(entry.toolTimeoutMs)),
    tools: { allow: [...(entry.tools?.allow ?? ["*"])], deny: [...(entry.tools?.deny ?? [])] },
  };
  if (transport === "http") {
    if (entry.url === undefined) throw specError(`"${formatKey(at())}" is missing the key "url" (a Streamable HTTP endpoint)`, at());
    const stray = STDIO_ONLY.find((k) => entry[k] !== undefined);
    if (stray) throw specError(`"${key(stray)}" is for stdio servers; an HTTP server (url) takes url and headers`, at(stray));
    return { ...common, transport, url: entry.url, headers: { ...(entry.headers ?? {}) } };
  }
  if (entry.url !== undefined) throw specError(`"${key("url")}": a server of type stdio takes a command, not a url`, at("url"));
  if (entry.headers !== undefined) throw specError(`"${key("headers")}" is for HTTP servers (url); a stdio server takes env`, at("headers"));
  if (entry.command === undefined) {
    throw specError(`"${formatKey(at())}" needs "command" (a stdio server, e.g. ["node", "server.js"]) or "url" (Streamable HTTP)`, at());
  }
  let argv: string[];
  if (typeof entry.command === "string") {
    const program = entry.command.trim();
    if (entry.args === undefined && /\s/.test(program)) {
      throw specError(
        `"${key("command")}" must list the program and its arguments separately, e.g. ["npx", "-y", "pkg"] or command "npx" with args [...] (no shell is used)`,
        at("command"),
      );
    }
    argv = [program, ...(entry.args ?? [])];
  } else {
    if (entry.args !== undefined) {
      throw specError(`"${key("args")}": with a command list, put the arguments in the list (args goes with a command string)`, at("args"));
    }
    argv = [...entry.command];
  }
  argv = argv.map((arg) => (arg.startsWith("./") || arg.startsWith("../") ? path.resolve(base, arg) : arg));
  const cwd = entry.cwd === undefined ? base : path.resolve(base, entry.cwd);
  if (!(await stat(cwd).catch(() => null))?.isDirectory()) {
    throw specError(`"${key("cwd")}": folder "${entry.cwd}" not found (${cwd})`, at("cwd"));
  }
  return { ...common, transport, command: argv, cwd, env: { ...(entry.env ?? {}) } };
}
