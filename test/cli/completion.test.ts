/**
 * Shell completion through the real shells, as a user's Tab drives it: the script of `yiem
 * completion bash|zsh|fish` is loaded into bash (COMP_WORDS + the completion function that
 * `complete -p` names), zsh (an interactive zsh on a pseudo-terminal via zpty, Tab pressed, the
 * matches captured at compadd) and fish (`complete -C`). Each shell must be installed: a missing
 * one fails the test with the line that installs it. Also: the completion table matches every
 * command's --help, and `yiem completion` itself (shells, help, usage errors).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMAND_TREE, type CommandInfo } from "../../src/cli/completion/words.js";
import { repoRoot, yiemBin } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

let root: string;
let project: string;
let binDir: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "yiem-completion-"));
  binDir = join(root, "bin");
  project = join(root, "project");
  await mkdir(binDir);
  // `yiem` on PATH, as a global install provides it.
  await writeFile(join(binDir, "yiem"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(yiemBin)} "$@"\n`);
  await chmod(join(binDir, "yiem"), 0o755);
  await mkdir(join(project, "tools"), { recursive: true });
  await mkdir(join(project, "prompts"));
  await mkdir(join(project, "other", "more-tools"), { recursive: true });
  await writeFile(join(project, "agent.config.yaml"), "name: t\nmodel: { name: m, baseURL: http://127.0.0.1:9/v1 }\ntoolDirs: [tools]\nbuiltinTools: [listTools]\n");
  await writeFile(join(project, "prompts", "system.md"), "Be brief.\n");
  await writeFile(join(project, "other", "other.yaml"), "name: o\nmodel: { name: m, baseURL: http://127.0.0.1:9/v1 }\ntoolDirs: [more-tools]\n");
  const tool = (name: string, extra = "") => `${extra}export default { name: ${JSON.stringify(name)}, label: "L", description: "d", inputSchema: { type: "object" }, async execute() { return { content: [{ type: "text", text: "ok" }] }; } };\n`;
  // A tool that prints while it loads: its output must not become a candidate.
  await writeFile(join(project, "tools", "count-words.mjs"), tool("count-words", 'console.log("noise-from-tool");\n'));
  await writeFile(join(project, "tools", "getTime.mjs"), tool("getTime"));
  await writeFile(join(project, "other", "more-tools", "fetch-page.mjs"), tool("fetch-page"));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

type Shell = "bash" | "zsh" | "fish";

function requireShell(shell: Shell): void {
  const found = spawnSync("sh", ["-c", `command -v ${shell}`], { encoding: "utf8" });
  expect(found.status, `${shell} is not installed; install it with: apt-get install -y ${shell} (.ci/run does this on CI)`).toBe(0);
}

/** The marker printed after each line's candidates in a batch. */
const DONE = "<<DONE>>";

/**
 * What the shell offers for each of `lines` with the cursor at the line's end: unique, sorted,
 * without a folder's `/` or a description. One shell session answers every line (bash: each
 * line's completion in its own subshell, so no state leaks from one to the next; zsh: one
 * interactive zsh on a pseudo-terminal, the line typed, Tab pressed, the line cleared; fish: one
 * `complete -C` per line); each completion still runs the real `yiem __complete`.
 */
function tabAll(shell: Shell, lines: string[]): Map<string, string[]> {
  requireShell(shell);
  const env = { ...process.env, PATH: `${binDir}:${process.env.PATH}`, NO_COLOR: "1", HOME: root };
  let result;
  if (shell === "bash") {
    const script = [
      "source <(yiem completion bash)",
      // The function bash calls is the one `complete -p` names.
      'fn=$(complete -p yiem | sed -n "s/.*-F \\([^ ]*\\) yiem$/\\1/p")',
      ...lines.map((line) => {
        const words = line.split(" ");
        return [
          "(",
          `COMP_WORDS=(${words.map((w) => JSON.stringify(w)).join(" ")}); COMP_CWORD=${words.length - 1}`,
          `COMP_LINE=${JSON.stringify(line)}; COMP_POINT=${line.length}`,
          '"$fn"',
          'printf "%s\\n" "${COMPREPLY[@]}"',
          ")",
          `echo ${JSON.stringify(DONE)}`,
        ].join("\n");
      }),
    ].join("\n");
    result = spawnSync("bash", ["--norc", "-c", script], { cwd: project, env, encoding: "utf8", timeout: 120_000 });
  } else if (shell === "zsh") {
    result = spawnSync("zsh", ["-f", "-c", ZSH_CAPTURE, "capture", ...lines], { cwd: project, env, encoding: "utf8", timeout: 120_000 });
  } else {
    const script = ["yiem completion fish | source", ...lines.map((line) => `complete -C ${fishQuote(line)}; echo ${fishQuote(DONE)}`)].join("\n");
    result = spawnSync("fish", ["--no-config", "-c", script], { cwd: project, env, encoding: "utf8", timeout: 120_000 });
  }
  expect(result.error, result.stderr).toBeUndefined();
  expect(result.status, result.stderr).toBe(0);
  const answers = result.stdout.split(`${DONE}\n`);
  // One answer per line, then nothing after the last marker.
  expect(answers, result.stdout).toHaveLength(lines.length + 1);
  expect(answers.at(-1)).toBe("");
  const offered = new Map<string, string[]>();
  lines.forEach((line, i) => {
    const words = answers[i].split("\n").map((w) => w.split("\t")[0].replace(/\r$/, "").replace(/\/$/, "")).filter(Boolean);
    offered.set(line, [...new Set(words)].sort());
  });
  return offered;
}

function fishQuote(text: string): string {
  return `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

/**
 * An interactive zsh on a pseudo-terminal: compinit, the script, then compadd wrapped to print
 * each match it adds with its prefixes (still adding it, so zsh behaves as without the wrapper), and a marker
 * printed after the completion (set again before each line: zsh empties comppostfuncs once it
 * ran them); for each line (the arguments), the line is typed, Tab pressed, the matches printed
 * up to the marker, then the whole line killed before the next one.
 */
const ZSH_CAPTURE = `
zmodload zsh/zpty
zpty shell zsh -f -i
zpty -w shell 'stty -echo; PS1=""; RPS1=""'
zpty -w shell 'autoload -Uz compinit && compinit -u -D'
zpty -w shell 'source <(yiem completion zsh)'
zpty -w shell 'compadd() { if [[ " $* " == *" -"[OAD]" "* ]]; then builtin compadd "$@"; return; fi; local -a got pp PP; builtin compadd -O got "$@"; zparseopts -E p:=pp P:=PP; local w; for w in "$got[@]"; do print -r -- "<<MA""TCH>>$IPREFIX\${\${(j::)PP}#-P}\${\${(j::)pp}#-p}$w"; done; builtin compadd "$@"; }'
zpty -w shell '_capture_end() { print -r -- "<<E""ND>>"; }'
zpty -w shell "bindkey '^I' complete-word; bindkey '^U' kill-whole-line"
local typed line
for typed in "$@"; do
  # zsh empties comppostfuncs after each completion: set it again for this one.
  zpty -w shell 'comppostfuncs=(_capture_end)'
  zpty -n -w shell "$typed"$'\\t'
  while zpty -r shell line; do
    line=\${line//$'\\r'/}
    [[ $line == *'<<END>>'* ]] && break
    [[ $line == *'<<MATCH>>'* ]] && print -r -- "\${line##*<<MATCH>>}"
  done
  print -r -- "${DONE}"
  zpty -n -w shell $'\\x15'
done
zpty -d shell
`;

const CASES: Array<[string, string[]]> = [
  ["yiem r", ["run"]],
  ["yiem tools c", ["call", "check"]],
  // The real spellings only: no yargs-style --c or --m.
  ["yiem run --c", ["--config", "--continue"]],
  ["yiem config --m", ["--max-retries", "--max-tokens", "--mcp-config", "--model"]],
  ["yiem run --output j", ["json"]],
  ["yiem run -c ag", ["agent.config.yaml"]],
  ["yiem run --record pr", ["prompts"]],
  ["yiem run --session prompts/s", ["prompts/system.md"]],
  ["yiem run --tool-dir ", ["other", "prompts", "tools"]],
  ["yiem run --system @prompts/", ["@prompts/system.md"]],
  ["yiem tools call --args @pr", ["@prompts"]],
  ["yiem tools call ", ["count-words", "getTime", "listTools"]],
  ["yiem tools show g", ["getTime"]],
  ["yiem tools show -c other/other.yaml ", ["fetch-page", "listTools"]],
  ["yiem tools call --tool-dir other/more-tools f", ["fetch-page"]],
  ["yiem run --allow-tools co", ["count-words"]],
  ["yiem run --deny-tools count-words,l", ["count-words,listTools"]],
  ["yiem completion ", ["bash", "fish", "zsh"]],
];

describe.each(["bash", "zsh", "fish"] as const)("Tab in %s", (shell) => {
  let offered: Map<string, string[]>;
  beforeAll(() => {
    offered = tabAll(shell, CASES.map(([line]) => line));
  }, 120_000);

  it.each(CASES)("%s<TAB> offers %j", (line, expected) => {
    expect(offered.get(line)).toEqual(expected);
  });
});

describe("bash --config=VALUE (bash splits the word at =)", () => {
  it("completes the value after =", () => {
    expect(tabAll("bash", ["yiem run --config = ag"]).get("yiem run --config = ag")).toEqual(["agent.config.yaml"]);
  });
});

describe("yiem __complete", () => {
  it("offers no tools and writes nothing to stderr when the spec is broken", async () => {
    const dir = join(root, "broken");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "agent.config.yaml"), "name: [unclosed\n");
    const r = await runCli(["__complete", "tools", "call", ""], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("words:\n");
  });

  it("answers file values with the prefix the shell puts back", async () => {
    const r = await runCli(["__complete", "run", "--append-system", "@pro"], { cwd: project });
    expect(r.stdout).toBe("file:@\n");
    const eq = await runCli(["__complete", "run", "--record=x"], { cwd: project });
    expect(eq.stdout).toBe("file:--record=\n");
  });
});

/** `--long` flags of a `--help` text. */
function helpFlags(help: string): string[] {
  return [...new Set([...help.matchAll(/^ +(?:-[A-Za-z], )?(--[a-z-]+)/gm)].map((m) => m[1]))].sort();
}

describe("the completion table", () => {
  const paths: Array<[string[], CommandInfo]> = [];
  for (const [name, info] of Object.entries(COMMAND_TREE)) {
    if (name === "completion") continue;
    if (info.subcommands) for (const [sub, subInfo] of Object.entries(info.subcommands)) paths.push([[name, sub], subInfo]);
    else paths.push([[name], info]);
  }

  it.each(paths)("%j has exactly the flags of its --help", async (path, info) => {
    const r = await runCli([...path, "--help"]);
    expect(r.code, r.stderr).toBe(0);
    expect(info.flags.map((f) => `--${f.name}`).sort()).toEqual(helpFlags(r.stdout));
  });
});

describe("the install lines of docs/cli.md, run as written", () => {
  const doc = readFileSync(join(repoRoot, "docs", "cli.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Shell completion"), doc.indexOf("## Environment"));
  const lines = /```sh\n([\s\S]*?)```/.exec(section)![1].trim().split("\n").map((l) => l.replace(/\s+#.*$/, ""));
  const forShell = (shell: Shell) => lines.find((l) => l.includes(`yiem completion ${shell}`))!;

  it.each(["bash", "zsh", "fish"] as const)("the %s line installs a completion the shell then uses", async (shell) => {
    requireShell(shell);
    const home = await mkdtemp(join(root, `home-${shell}-`));
    const env = { ...process.env, PATH: `${binDir}:${process.env.PATH}`, HOME: home, XDG_CONFIG_HOME: undefined, ZDOTDIR: undefined };
    // zsh's line goes after compinit in ~/.zshrc (docs/cli.md says so): a zshrc that has it.
    if (shell === "zsh") await writeFile(join(home, ".zshrc"), "autoload -Uz compinit && compinit -u\n");
    const install = spawnSync("sh", ["-c", forShell(shell)], { cwd: home, env, encoding: "utf8", timeout: 30_000 });
    expect(install.status, install.stderr).toBe(0);
    const check = {
      bash: ["bash", ["-ic", "complete -p yiem"]],
      zsh: ["zsh", ["-ic", "print -r -- $_comps[yiem]"]],
      fish: ["fish", ["-c", "complete -C 'yiem tools c'"]],
    }[shell] as [string, string[]];
    const used = spawnSync(check[0], check[1], { cwd: home, env, encoding: "utf8", timeout: 30_000 });
    expect(used.status, used.stderr).toBe(0);
    expect(used.stdout).toMatch({ bash: /complete -F _yiem_completion yiem/, zsh: /^_yiem$/m, fish: /^call\b[\s\S]*^check\b/m }[shell]);
  });
});

describe("yiem completion", () => {
  it.each([
    ["bash", "complete -F _yiem_completion yiem"],
    ["zsh", "compdef _yiem yiem"],
    ["fish", "complete -c yiem -f -a '(__yiem_complete)'"],
  ])("yiem completion %s prints the %s script", async (shell, line) => {
    const r = await runCli(["completion", shell]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(line);
  });

  it("without a name: the shell $SHELL names, else bash", async () => {
    expect((await runCli(["completion"], { env: { SHELL: "/usr/bin/fish" } })).stdout).toContain("complete -c yiem");
    expect((await runCli(["completion"], { env: { SHELL: "/bin/zsh" } })).stdout).toMatch(/^#compdef yiem\n/);
    expect((await runCli(["completion"], { env: { SHELL: "/bin/tcsh" } })).stdout).toContain("complete -F _yiem_completion yiem");
  });

  it("--help describes the command instead of printing the script", async () => {
    const r = await runCli(["completion", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^yiem completion \[bash\|zsh\|fish\]\n/);
    expect(r.stdout).toContain("mkdir -p ~/.config/fish/completions && yiem completion fish > ~/.config/fish/completions/yiem.fish");
    expect(r.stdout).toMatch(/^Exit codes:\n {2}0 +\S.*\n {2}2 +\S/m);
  });

  it.each([
    [["completion", "--foo"], "yiem: unknown flag --foo for yiem completion (it takes only a shell: bash, zsh, fish)"],
    [["completion", "bash", "zsh"], 'yiem: unexpected argument "zsh" for yiem completion'],
    [["completion", "powershell"], 'yiem: unknown shell "powershell" for yiem completion (bash, zsh, fish)'],
  ])("%j is a usage error, not a script", async (args, message) => {
    const r = await runCli(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(`${message}\n`);
  });
});
