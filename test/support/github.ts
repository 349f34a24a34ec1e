/**
 * Reading GitHub Actions workflow commands as the runner does: a line whose text (after leading
 * blanks) starts with `::` is a command `::name k=v,k=v::data`; data is unescaped from `%25`,
 * `%0D`, `%0A`, property values also from `%3A`, `%2C`. Any other line is plain log text.
 */
export interface ParsedCommand {
  name: string;
  properties: Record<string, string>;
  data: string;
}

export type ParsedLine = { command: ParsedCommand } | { plain: string };

const unescapeData = (s: string) => s.replace(/%0D/gi, "\r").replace(/%0A/gi, "\n").replace(/%25/g, "%");
const unescapeProperty = (s: string) => unescapeData(s.replace(/%3A/gi, ":").replace(/%2C/gi, ","));

export function parseWorkflowLine(line: string): ParsedLine {
  const text = line.trimStart();
  if (!text.startsWith("::")) return { plain: line };
  const end = text.indexOf("::", 2);
  if (end < 0) return { plain: line };
  const info = text.slice(2, end);
  const space = info.indexOf(" ");
  const name = space < 0 ? info : info.slice(0, space);
  const properties: Record<string, string> = {};
  if (space >= 0) {
    for (const pair of info.slice(space + 1).split(",")) {
      const eq = pair.indexOf("=");
      if (eq > 0) properties[pair.slice(0, eq)] = unescapeProperty(pair.slice(eq + 1));
    }
  }
  return { command: { name, properties, data: unescapeData(text.slice(end + 2)) } };
}

/** Every line of `stderr` (without the final newline) as the runner reads it. */
export function parseWorkflowLines(stderr: string): ParsedLine[] {
  return stderr.split("\n").filter((line, i, all) => !(line === "" && i === all.length - 1)).map(parseWorkflowLine);
}

/** The commands of `stderr`; fails when any line is not a workflow command. */
export function workflowCommands(stderr: string): ParsedCommand[] {
  return parseWorkflowLines(stderr).map((line) => {
    if ("plain" in line) throw new Error(`not a workflow command: ${JSON.stringify(line.plain)}`);
    return line.command;
  });
}
