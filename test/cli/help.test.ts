/**
 * What the command line tells people: `--help` with examples, environment variables and exit
 * codes (in step with docs/cli.md); usage errors in the exact words docs/cli.md ("Usage errors") and docs/spec.md
 * ("Errors", the `--…` lines) promise, with the nearest flag or command suggested.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "../../src/cli/exit-codes.js";
import { nearestFlag } from "../../src/cli/usage-errors.js";
import { editDistance, nearestName } from "../../src/nearest-name.js";
import { repoRoot, yiemBin, type CliResult } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

const cliDoc = readFileSync(join(repoRoot, "docs/cli.md"), "utf8");
const specDoc = readFileSync(join(repoRoot, "docs/spec.md"), "utf8");
const DEMO = ["-m", "replay:configs/demo.replay.jsonl"];

/** The text of a Markdown section (from its heading to the next heading of the same level or higher). */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const level = heading.indexOf(" ");
  const rest = markdown.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`^#{1,${level}} `, "m"));
  return end < 0 ? rest : rest.slice(0, end);
}

/** The body of the first fenced block in `markdown`. */
function firstFence(markdown: string): string {
  const match = /^```[\w-]*\n([\s\S]*?)^```/m.exec(markdown);
  expect(match).not.toBeNull();
  return match![1];
}

/** Splits a simple shell command into words (single and double quotes; no expansions). */
function shellWords(command: string): string[] {
  return [...command.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g)].map((m) =>
    m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? m[3]),
  );
}

/** The usage error a run printed: the `error` of its lone agentEnd event in ndjson mode, else its stderr line. */
function usageError(r: CliResult): string {
  const text = r.stderr.trim();
  if (text.startsWith("{")) {
    expect(r.events).toHaveLength(1);
    expect(r.events[0]).toMatchObject({ type: "agentEnd", stopReason: "error" });
    return `yiem: ${String(r.events[0].error)}`;
  }
  return text;
}

describe("--help", () => {
  const environmentVariables = [...section(cliDoc, "## Environment").matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]);

  it.each([[["--help"]], [["run", "--help"]]])("%j shows examples, the environment and every exit code", async (args) => {
    const r = await runCli(args);
    expect(r.code).toBe(0);
    const help = r.stdout;
    expect(help).toContain("Examples:");
    expect(help).toContain('yiem run -m replay:configs/demo.replay.jsonl "What time is it in Tokyo?"');

    const environment = help.slice(help.indexOf("Environment:"), help.indexOf("Exit codes:"));
    for (const name of ["YIEM_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "YIEM_CACHE_DIR"]) expect(environment).toContain(name);
    // Every variable the help names is documented.
    for (const name of environment.match(/\b[A-Z][A-Z0-9_]{3,}\b/g) ?? []) expect(environmentVariables, name).toContain(name);

    const exitCodes = help.slice(help.indexOf("Exit codes:"));
    for (const code of Object.values(EXIT)) expect(exitCodes).toMatch(new RegExp(`^  ${code} +\\S`, "m"));
    // …and they are the codes of docs/cli.md's exit-code table.
    const documented = [...section(cliDoc, "### Exit codes").matchAll(/^\| `(\d+)` \|/gm)].map((m) => Number(m[1]));
    expect(documented.sort((a, b) => a - b)).toEqual(Object.values(EXIT).sort((a, b) => a - b));
  });

  // Every command yargs knows, with the exit codes docs/cli.md gives it.
  const commands: Array<[string[], number[]]> = [
    [["config"], [0, 1, 2]],
    [["init"], [0, 2]],
    [["tools"], [0, 1, 2, 130]],
    [["tools", "list"], [0, 1, 2]],
    [["tools", "show"], [0, 2]],
    [["tools", "call"], [0, 1, 2, 130]],
    [["tools", "new"], [0, 1, 2]],
    [["tools", "check"], [0, 1, 2]],
    [["mcp"], [0, 1, 2, 130]],
    [["mcp", "list"], [0, 1, 2]],
    [["mcp", "serve"], [0, 1, 2, 130, 143]],
    [["doctor"], [0, 1, 2]],
    [["sessions"], [0, 1, 2]],
    [["sessions", "list"], [0, 2]],
    [["sessions", "show"], [0, 2]],
    [["sessions", "rm"], [0, 1, 2]],
    [["sessions", "prune"], [0, 2]],
    [["batch"], [0, 1, 2, 3, 130]],
    [["batch", "merge"], [0, 1, 2]],
  ];

  it("docs/cli.md's command overview lists every command `yiem --help` lists", async () => {
    const help = (await runCli(["--help"])).stdout;
    const listed = [...help.slice(help.indexOf("Commands:"), help.indexOf("Options:")).matchAll(/^  yiem (\w+)/gm)].map((m) => m[1]);
    expect(listed.length).toBeGreaterThan(8);
    const overview = firstFence(cliDoc);
    for (const command of listed) expect(overview, command).toMatch(new RegExp(`^  yiem ${command}\\b`, "m"));
  });

  it.each(commands)("yiem %j --help describes every flag and positional and lists the exit codes", async (command, codes) => {
    const r = await runCli([...command, "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`yiem ${command.join(" ")}`);
    const positionals = r.stdout.indexOf("Positionals:");
    const options = r.stdout.slice(positionals >= 0 ? positionals : r.stdout.indexOf("Options:"), r.stdout.indexOf("Exit codes:"));
    expect(options).toContain("--help");
    // An option or positional line with only its type after the name has no description.
    const bare = options.split("\n").filter((line) => /^\s+(-\w, )?(--[\w-]+|\w+)\s+\[/.test(line));
    expect(bare).toEqual([]);
    const exitCodes = r.stdout.slice(r.stdout.indexOf("Exit codes:"));
    expect(exitCodes).not.toBe("");
    for (const code of codes) expect(exitCodes).toMatch(new RegExp(`^  ${code} +\\S`, "m"));
  });

  it("the exit codes in each tools command's --help are the ones docs/cli.md's table gives", async () => {
    const table = section(cliDoc, "## `yiem tools …`");
    for (const [command] of commands.filter(([c]) => c[0] === "tools" && c.length > 1)) {
      const row = table.split("\n").find((line) => line.startsWith(`| \`yiem ${command.join(" ")}`));
      expect(row, command.join(" ")).toBeDefined();
      const documented = row!.split("|").at(-2)!.match(/\b\d+\b/g)!.map(Number);
      const help = (await runCli([...command, "--help"])).stdout;
      const shown = [...help.slice(help.indexOf("Exit codes:")).matchAll(/^  (\d+) /gm)].map((m) => Number(m[1]));
      // The help may add 2 for a spec or usage error, which every command has.
      for (const code of documented) expect(shown, `${command.join(" ")} ${code}`).toContain(code);
    }
  });

  it("shows the init --example and completion commands", async () => {
    const r = await runCli(["--help"]);
    expect(r.stdout).toContain("yiem init --example");
    expect(r.stdout).toMatch(/yiem completion \[bash\|zsh\|fish\] +Print a shell completion script/);
    const init = await runCli(["init", "--help"]);
    expect(init.stdout).toContain("--example");
  });
});

describe("usage errors", () => {
  const examples = firstFence(section(cliDoc, "## Usage errors"))
    .split("\n")
    .filter((line) => line.includes("→"))
    .map((line) => {
      const [command, message] = line.split("→").map((part) => part.trim());
      return { command, message };
    });

  it("docs/cli.md lists examples", () => {
    expect(examples.length).toBeGreaterThanOrEqual(8);
  });

  it.each(examples)("$command → exactly what docs/cli.md says, exit 2", async ({ command, message }) => {
    const words = shellWords(command);
    expect(words[0]).toBe("yiem");
    const r = await runCli(words.slice(1));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe("");
    expect(usageError(r)).toBe(message);
  });

  const flagLines = firstFence(section(specDoc, "## Errors")).split("\n").filter((line) => line.startsWith("--"));

  it("docs/spec.md lists flag errors", () => {
    expect(flagLines.length).toBeGreaterThanOrEqual(4);
  });

  it.each(flagLines)("yiem run prints the docs/spec.md line: %s", async (line) => {
    const [, flag, value] = /^(--[a-z-]+)\b.*?"([^"]+)"/.exec(line)!;
    const r = await runCli(["run", flag, value, ...DEMO, "hi"]);
    expect(r.code, r.stderr).toBe(2);
    expect(usageError(r)).toBe(`yiem: ${line.replace("/abs/path/", repoRoot)}`);
  });

  it("an unknown flag in pretty mode is one `yiem:` line naming it and the nearest flag", async () => {
    const r = await runCli(["run", "--events", "pretty", "--max-turn", "3", "hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("yiem: unknown flag --max-turn for yiem run (did you mean --max-turns?)\n");
  });

  it("an unknown flag with nothing close is named without a suggestion", async () => {
    const r = await runCli(["config", "--zzzzzz"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("yiem: unknown flag --zzzzzz for yiem config\n");
  });

  it("a flag of another command is unknown here (yargs' camelCase duplicate is not repeated)", async () => {
    const r = await runCli(["config", "--max-turns", "3"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("yiem: unknown flag --max-turns for yiem config\n");
  });

  it("an unknown top-level command suggests the nearest", async () => {
    const r = await runCli(["rn", "hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('yiem: unknown command "rn" (did you mean run?)\n');
  });

  it.each([
    [["frob"], 'yiem: unknown command "frob"'],
    [["tools", "frob"], 'yiem: unknown command "frob" for yiem tools'],
    [["tools", "chek"], 'yiem: unknown command "chek" for yiem tools (did you mean check?)'],
    [["confg"], 'yiem: unknown command "confg" (did you mean config?)'],
  ])("%j suggests a command only when it is close (as for flags)", async (args, message) => {
    const r = await runCli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`${message}\n`);
  });

  it("init --dir: a file, or a path under a file, is named; missing folders are made", async () => {
    const dir = await mkdtemp(join(tmpdir(), "yiem-init-dir-"));
    try {
      await writeFile(join(dir, "afile"), "x");
      for (const given of ["afile", "afile/sub"]) {
        const r = await runCli(["init", "--dir", given], { cwd: dir });
        expect(r.code, given).toBe(2);
        expect(r.stderr).toBe(`yiem: --dir ${JSON.stringify(given)}: ${join(dir, "afile")} is not a folder\n`);
      }
      await mkdir(join(dir, "blocked"));
      await writeFile(join(dir, "blocked", "tools"), "a file where init needs a folder");
      const blocked = await runCli(["init", "--dir", "blocked"], { cwd: dir });
      expect(blocked.code).toBe(2);
      expect(blocked.stderr).toBe(`yiem: init needs ${join(dir, "blocked", "tools")} to be a folder; nothing was written\n`);
      expect(await readdir(join(dir, "blocked"))).toEqual(["tools"]);
      const made = await runCli(["init", "--dir", "new/deeper"], { cwd: dir });
      expect(made.code, made.stderr).toBe(0);
      expect(made.stdout).toContain(`wrote ${join(dir, "new", "deeper", "tools", "countWords.ts")}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("init --dir under /proc (where Node's recursive mkdir never returns) is a clear error", async () => {
    const r = await runCli(["init", "--dir", "/proc/yiem-no-such/x"], { timeoutMs: 15_000 });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^yiem: --dir "\/proc\/yiem-no-such\/x": cannot create \/proc(\/yiem-no-such)?: /);
  });

  it("values still work: --max-turns 3, --system=-x, a value that is a negative number", async () => {
    const r = await runCli(["run", "--dry-run", ...DEMO, "--max-turns", "3", "--system=-x", "hi"]);
    expect(r.code, r.stderr).toBe(0);
    const dry = JSON.parse(r.stdout) as { spec: { systemPrompt: string; limits: { maxTurns: number } } };
    expect(dry.spec.limits.maxTurns).toBe(3);
    expect(dry.spec.systemPrompt).toBe("-x");
    const negative = await runCli(["run", "--dry-run", ...DEMO, "--max-turns", "-1", "hi"]);
    expect(usageError(negative)).toBe('yiem: --max-turns must be an integer >= 1 (got "-1")');
  });
});

describe("nearestFlag", () => {
  const flags = ["config", "c", "tool-dir", "debug", "model", "m", "base-url", "system", "tool-execution", "max-turns", "tool-timeout", "timeout", "dry-run", "maxTurns"];

  it.each([
    ["--modle", "--model"],
    ["--mdoel", "--model"],
    ["--max-turn", "--max-turns"],
    ["--tool-timout", "--tool-timeout"],
    ["--timeot", "--timeout"],
    ["--base", "--base-url"],
    ["--no-dry-runn", "--no-dry-run"],
    ["--debgu", "--debug"],
    ["--maxturns", "--max-turns"],
    ["--max_turns", "--max-turns"],
  ])("%s → %s", (typed, expected) => {
    expect(nearestFlag(typed, flags)).toBe(expected);
  });

  it.each(["--zzzzzz", "--to", "-q", "--x", "--banana", "--max-tokens", "--maxtokens", "--max-token"])("%s → no suggestion", (typed) => {
    expect(nearestFlag(typed, flags)).toBeUndefined();
  });

  it("spec keys use the same rule: case and separators do not count, another word is no typo", () => {
    const limits = ["maxTurns", "toolTimeoutMs", "runTimeoutMs", "maxConcurrency", "maxTokens", "loopDetection"];
    expect(nearestName("maxTurn", limits)).toBe("maxTurns");
    expect(nearestName("max_tokens", limits)).toBe("maxTokens");
    expect(nearestName("toolTimeout", limits)).toBe("toolTimeoutMs");
    expect(nearestName("baseUrl", ["name", "baseURL", "apiKeyEnv"])).toBe("baseURL");
    expect(nearestName("toolDir", ["toolDirs", "tools", "toolExecution"])).toBe("toolDirs");
    expect(nearestName("maxTurns", ["maxTokens"])).toBeUndefined();
    expect(nearestName("timeout", ["maxTurns", "toolTimeoutMs", "runTimeoutMs"])).toBeUndefined();
  });

  it("counts a swap of two letters as one edit", () => {
    expect(editDistance("modle", "model")).toBe(1);
    expect(editDistance("model", "model")).toBe(0);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("kitten", "sitting")).toBe(3);
  });
});
