/**
 * The README kept true: its first two commands are exactly the documented set-up/run and test
 * commands; the run part of the first works as written (offline, no key, the real getTime tool,
 * the live time in the answer); every flag in a README or docs/*.md command exists in that
 * command's --help; every relative link resolves; the library example runs.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parse } from "yaml";
import { assertEventStream, repoRoot } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";
import { fences, isShell, readmeGitInstall } from "../support/markdown.js";

const FIRST_COMMAND = 'npm ci && npx yiem run --model replay:configs/demo.replay.jsonl "What time is it in Tokyo?"';
const TEST_COMMAND = "npm test";

const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
const cliDoc = readFileSync(join(repoRoot, "docs/cli.md"), "utf8");

/** Splits a simple shell command into words (single and double quotes; no expansions). */
function shellWords(command: string): string[] {
  const words: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (const match of command.matchAll(pattern)) {
    words.push(match[1] !== undefined ? match[1].replace(/\\(.)/g, "$1") : (match[2] ?? match[3]));
  }
  return words;
}

/** Tokyo wall-clock "HH:MM" for every minute from `from` to `to` (inclusive, padded by a minute each side). */
function tokyoMinutes(from: number, to: number): Set<string> {
  const format = new Intl.DateTimeFormat("en-GB", { timeZone: "Asia/Tokyo", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  const minutes = new Set<string>();
  for (let t = from - 60_000; t <= to + 60_000; t += 30_000) minutes.add(format.format(new Date(t)));
  return minutes;
}

describe("README.md", () => {
  it("starts with the set-up + run command, then the test command, exactly", () => {
    const shell = fences(readme).filter(isShell);
    expect(shell[0]?.body).toBe(FIRST_COMMAND);
    expect(shell[1]?.body).toBe(TEST_COMMAND);
  });

  it("`npx yiem` resolves to this package's own bin, offline (never the registry)", async () => {
    const { execFile } = await import("node:child_process");
    const { promisify } = await import("node:util");
    const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string };
    const { stdout } = await promisify(execFile)("npx", ["yiem", "--version"], {
      cwd: repoRoot,
      env: { ...process.env, npm_config_offline: "true", npm_config_yes: "false" },
      timeout: 60_000,
    });
    expect(stdout).toBe(`${pkg.version}\n`);
  });

  it("its first command's run part works as written: offline, no API key, the real getTime, the live time", async () => {
    const [setup, runPart] = FIRST_COMMAND.split(" && ");
    expect(setup).toBe("npm ci");
    const words = shellWords(runPart);
    expect(words.slice(0, 2)).toEqual(["npx", "yiem"]);

    const before = Date.now();
    // runCli spawns bin/yiem.js with cwd = repo root and an environment without OPENAI_*/YIEM_* or any key.
    const r = await runCli(words.slice(2), { env: { OPENAI_API_KEY: undefined, YIEM_MODEL: undefined }, timeoutMs: 60_000 });
    const after = Date.now();

    expect(r.stderr.length).toBeGreaterThan(0);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    assertEventStream(r.events);
    expect(r.events[0]).toMatchObject({ type: "agentStart", configPath: join(repoRoot, "agent.config.yaml") });
    expect(r.events.some((e) => e.type === "toolCallRejected")).toBe(false);

    type End = { toolName: string; isError: boolean; result: { content: Array<{ type: string; text: string }>; details: Record<string, unknown> } };
    const ends = r.events.filter((e) => e.type === "toolExecutionEnd") as unknown as End[];
    expect(ends.map((e) => e.toolName).sort()).toEqual(["getTime", "listTools"]);
    for (const end of ends) expect(end.isError, end.toolName).toBe(false);
    const getTime = ends.find((e) => e.toolName === "getTime")!;
    expect(getTime.result.details).toMatchObject({ timezone: "Asia/Tokyo", matchedBy: "city", city: "Tokyo" });
    const liveText = getTime.result.content[0].text;

    // The answer is the recorded final turn with the live tool output filled in.
    const replay = readFileSync(join(repoRoot, "configs/demo.replay.jsonl"), "utf8").trim().split("\n");
    const finalTurn = JSON.parse(replay.at(-1)!) as { content: string };
    expect(finalTurn.content).toContain("{{result:getTime}}");
    expect(r.stdout).toBe(`${finalTurn.content.replace("{{result:getTime}}", liveText)}\n`);
    expect(r.stdout).toContain("Tokyo");

    const clock = /\b(\d{2}):(\d{2}):\d{2} \(UTC\+09:00\)/.exec(r.stdout);
    expect(clock, r.stdout).not.toBeNull();
    expect([...tokyoMinutes(before, after)]).toContain(`${clock![1]}:${clock![2]}`);
    expect(r.events.at(-1)).toMatchObject({ type: "agentEnd", stopReason: "completed", turns: 2, toolCalls: 2 });
  });

  it("links only to files that exist, including every docs/*.md page", () => {
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((l) => !/^[a-z]+:/i.test(l) && !l.startsWith("#"));
    const docs = links.filter((l) => /^docs\/[^/]+\.md/.test(l));
    expect(docs.map((l) => l.split("#")[0]).sort()).toEqual(
      expect.arrayContaining(["docs/cli.md", "docs/events.md", "docs/spec.md", "docs/tools.md"]),
    );
    for (const link of links) expect(existsSync(join(repoRoot, link.split("#")[0])), link).toBe(true);
  });

  it("its cron and CI snippets run the local binary, never a bare `npx yiem` that could fetch from the registry", () => {
    const section = readme.slice(readme.indexOf("## Cron and CI"), readme.indexOf("\n## ", readme.indexOf("## Cron and CI") + 3));
    const shell = fences(section).filter(isShell);
    expect(shell.length).toBeGreaterThan(0);
    for (const fence of shell) {
      expect(fence.body).toMatch(/npx --no-install yiem |\.\/node_modules\/\.bin\/yiem /);
      expect(fence.body).not.toMatch(/npx yiem/);
    }
  });

  it("names in its cron example the exit codes the CLI really uses", async () => {
    const { EXIT } = await import("../../src/cli/exit-codes.js");
    for (const code of Object.values(EXIT)) expect(readme).toContain(`\`${code}\``);
  });
});

describe("install commands and workflow steps, as written", () => {
  const docs = ["README.md", ...readdirSync(join(repoRoot, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
  const blocks = docs.flatMap((file) => fences(readFileSync(join(repoRoot, file), "utf8")).map((fence) => ({ file, fence })));

  it("README's install from git: the line test/e2e/git-install.test.ts runs, packing the tarball the next line and the Install block install", () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { name: string; version: string };
    const tarball = `${pkg.name}-${pkg.version}.tgz`;
    const [pack, install, ...more] = readmeGitInstall();
    expect(pack).toMatch(/^npm pack "git\+file:\/\/\$\(cd \.\.\/yiem && pwd\)"\s+# writes (\S+) here$/);
    expect(pack).toContain(`# writes ${tarball} here`);
    expect(install).toBe(`npm i ./${tarball}`);
    expect(more).toEqual([]);
    expect(fences(readme).filter(isShell).some((f) => f.body.includes(`npm i ../yiem/${tarball}`))).toBe(true);
  });

  it("no command block names a placeholder host or owner: every `uses:` is a GitHub-made action or a folder", () => {
    const shown = blocks.filter(({ fence }) => isShell(fence) || ["yaml", "yml"].includes(fence.lang));
    expect(shown.length).toBeGreaterThan(20);
    for (const { file, fence } of shown) {
      expect(fence.body, file).not.toMatch(/\bOWNER\b|\bHOST\//);
      for (const [, uses] of fence.body.matchAll(/^\s*-?\s*uses:\s*(\S+)/gm)) expect(uses, `${file}: uses: ${uses}`).toMatch(/^(actions\/[\w-]+@v\d+|\.\/[\w./-]+)$/);
    }
  });

  it("the yiem action step in docs/batch.md gives only inputs action.yml has and reads only outputs it writes", () => {
    const action = parse(readFileSync(join(repoRoot, "action.yml"), "utf8")) as { inputs: Record<string, unknown>; outputs: Record<string, unknown> };
    const batchDoc = readFileSync(join(repoRoot, "docs/batch.md"), "utf8");
    const steps = fences(batchDoc)
      .filter((f) => f.lang === "yaml" && /^- /.test(f.body))
      .flatMap((f) => parse(f.body) as Array<{ id?: string; uses?: string; with?: Record<string, unknown> }>);
    const yiem = steps.filter((step) => step.uses?.startsWith("./"));
    expect(yiem.length).toBe(1);
    expect(Object.keys(action.inputs)).toEqual(expect.arrayContaining(Object.keys(yiem[0].with ?? {})));
    const read = [...batchDoc.matchAll(new RegExp(`steps\\.${yiem[0].id}\\.outputs\\.([\\w-]+)`, "g"))].map((m) => m[1]);
    expect(read.length).toBeGreaterThan(0);
    expect(Object.keys(action.outputs)).toEqual(expect.arrayContaining(read));
  });
});

describe("docs/cli.md", () => {
  it("has working relative links and anchors", () => {
    const links = [...cliDoc.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((l) => !/^[a-z]+:/i.test(l));
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) {
      const [file, anchor] = link.split("#");
      const target = file ? resolve(join(repoRoot, "docs"), file) : join(repoRoot, "docs/cli.md");
      expect(existsSync(target), link).toBe(true);
      if (anchor) expect(headingSlugs(readFileSync(target, "utf8")), link).toContain(anchor);
    }
  });

  it("documents every flag that --help shows for run", async () => {
    const help = await runCli(["run", "--help"]);
    const flags = [...help.stdout.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]).filter((f) => f !== "help" && f !== "version");
    expect(flags.length).toBeGreaterThan(10);
    for (const flag of flags) expect(cliDoc, `--${flag}`).toContain(`--${flag}`);
  });
});

/** GitHub-style anchors of a Markdown file's headings. */
function headingSlugs(markdown: string): string[] {
  return [...markdown.matchAll(/^#+\s+(.+)$/gm)].map((m) =>
    m[1].trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-"),
  );
}

describe("commands in README.md, docs/cli.md and the other docs", () => {
  /** `yiem …` invocations in shell blocks: the subcommand path and the flags used. */
  function invocations(markdown: string): Array<{ line: string; command: string[]; flags: string[] }> {
    const found: Array<{ line: string; command: string[]; flags: string[] }> = [];
    for (const fence of fences(markdown).filter(isShell)) {
      const joined = fence.body.replace(/\\\n\s*/g, " ");
      for (const line of joined.split("\n")) {
        for (const match of line.matchAll(/(?:^|[\s|;&(])(?:npx )?yiem\s+([^|;&<>#]*)/g)) {
          const words = shellWords(match[1]);
          const command = [words[0]];
          if (["tools", "mcp", "sessions"].includes(words[0]) && words[1] && !words[1].startsWith("-")) command.push(words[1]);
          if (words[0] === "batch" && words[1] === "merge") command.push(words[1]);
          const flags = words
            .filter((w) => /^--?[a-zA-Z]/.test(w))
            .map((w) => w.split("=")[0].replace(/^--no-/, "--"));
          found.push({ line, command, flags });
        }
      }
    }
    return found;
  }

  it("use only commands and flags that exist (and so do the other docs' commands)", async () => {
    const otherDocs = ["sessions", "tools", "reliability", "batch", "mcp", "spec", "events", "compatibility"].map((page) =>
      readFileSync(join(repoRoot, "docs", `${page}.md`), "utf8"),
    );
    const all = [...invocations(readme), ...invocations(cliDoc), ...otherDocs.flatMap(invocations)];
    expect(all.length).toBeGreaterThan(15);
    const helpCache = new Map<string, string>();
    for (const { line, command, flags } of all) {
      const key = command.join(" ");
      if (!helpCache.has(key)) {
        const help = await runCli([...command, "--help"]);
        expect(help.code, `yiem ${key} --help (from: ${line})`).toBe(0);
        helpCache.set(key, help.stdout);
      }
      const help = helpCache.get(key)!;
      for (const flag of flags) {
        const known = flag.startsWith("--") ? new RegExp(`(^|[\\s,])${flag}\\b`) : new RegExp(`(^|\\s)${flag},`);
        expect(known.test(help), `${flag} in "${line}" is not an option of yiem ${key}`).toBe(true);
      }
    }
  });
});

describe("the library example in README.md", () => {
  let dir: string | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("runs and prints what its comment says", async () => {
    const example = fences(readme).find((f) => f.lang === "ts" && f.body.includes("runAgent"));
    expect(example).toBeDefined();
    const expected = /console\.log\([^)]*\);\s*\/\/\s*(.+)$/m.exec(example!.body)?.[1];
    expect(expected).toBeDefined();

    dir = await mkdtemp(join(tmpdir(), "yiem-readme-"));
    const file = join(dir, "example.ts");
    await writeFile(file, example!.body);
    const logged: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(" ")));
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    await import(/* @vite-ignore */ pathToFileURL(file).href);
    expect(logged).toEqual([expected!.trim()]);
  });
});
