/**
 * The published package works for someone who never cloned the repository: `npm pack` makes the
 * tarball (with dist/, docs/, LICENSE, schema/, the example tools and configs; no tests, no
 * sources), `npm i <tgz>` installs it into a new project offline without building anything, and
 * the installed `yiem` runs init --example, tools list, tools call and the offline replay run there.
 *
 * Offline: the npm cache holds the dependency tarballs that `npm ci` fetched, but not the registry
 * metadata npm needs to choose versions. The new project therefore gets a package-lock.json that
 * names the same versions as this repository's lock (its non-dev entries), and npm installs the
 * tarball and its dependencies from the cache alone. If that fails, the test fails with npm's reason.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertEventStream, baseEnv, parseNdjson, repoRoot } from "../support/cli.js";

const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  name: string;
  version: string;
  dependencies: Record<string, string>;
};

let root: string;
let project: string;
let tarball: string;
let packedFiles: string[];
let installLog: string;

/** npm's environment: the caller's, without the npm_* settings of an enclosing `npm test`. */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) && key.toLowerCase() !== "npm_config_cache") continue;
    env[key] = value;
  }
  return env;
}

async function npm(args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run("npm", args, { cwd, env: npmEnv(), timeout: 60_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`npm ${args.join(" ")} failed in ${cwd}:\n${e.stderr || e.message}\n${e.stdout ?? ""}`);
  }
}

/** Runs the installed `yiem` (node_modules/.bin/yiem) as a user would, in `cwd`. */
async function yiem(args: string[], cwd: string) {
  const bin = join(project, "node_modules", ".bin", "yiem");
  try {
    const { stdout, stderr } = await run(bin, args, { cwd, env: baseEnv(), timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/** GitHub's anchors for the headings of a Markdown page. */
function headingSlugs(markdown: string): string[] {
  return [...markdown.matchAll(/^#+\s+(.+)$/gm)].map((m) =>
    m[1].trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-"),
  );
}

/** The project's lock: the tarball, plus this repository's locked runtime dependencies. */
function projectLock(tgz: string) {
  const lock = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as {
    packages: Record<string, { dev?: boolean; devOptional?: boolean }>;
  };
  const packages: Record<string, unknown> = {
    "": { name: "try-yiem", version: "1.0.0", dependencies: { yiem: `file:${tgz}` } },
    "node_modules/yiem": {
      version: pkg.version,
      resolved: `file:${tgz}`,
      dependencies: pkg.dependencies,
      bin: { yiem: "bin/yiem.js" },
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path && !entry.dev && !entry.devOptional) packages[path] = entry;
  }
  return { name: "try-yiem", version: "1.0.0", lockfileVersion: 3, requires: true, packages };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "yiem-pack-"));
  const packDir = join(root, "pack");
  await mkdir(packDir);
  // dist/ is built by `npm test` before the suite; --ignore-scripts keeps the pack from rebuilding
  // it under the other test files, which run it.
  const packed = await npm(["pack", "--json", "--ignore-scripts", "--pack-destination", packDir], repoRoot);
  const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = join(packDir, info.filename);
  packedFiles = info.files.map((f) => f.path);

  project = join(root, "try-yiem");
  await mkdir(project);
  await writeFile(join(project, "package.json"), `${JSON.stringify({ name: "try-yiem", version: "1.0.0", private: true }, null, 2)}\n`);
  await writeFile(join(project, "package-lock.json"), `${JSON.stringify(projectLock(tarball), null, 2)}\n`);
  const installed = await npm(["i", tarball, "--offline", "--no-audit", "--no-fund"], project);
  installLog = installed.stdout + installed.stderr;
}, 90_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe("npm pack", () => {
  it("ships dist, docs, LICENSE, the schemas, the example tools and configs; no tests, sources or maps", () => {
    for (const file of [
      "package.json", "README.md", "LICENSE", "bin/yiem.js", "dist/cli/main.js", "dist/index.js", "dist/index.d.ts",
      "schema/agent.schema.json", "schema/events.schema.json", "docs/cli.md", "docs/spec.md", "docs/tools.md",
      "tools/getTime.ts", "tools/getWeather.ts", "tools/_lib/cities.ts", "configs/demo.replay.jsonl",
      "configs/weather.yaml", "configs/review.yaml", "configs/scaffold.yaml", "agent.config.yaml",
    ]) {
      expect(packedFiles, file).toContain(file);
    }
    const unwanted = packedFiles.filter((f) => /^(test|src|bench|\.ci)\//.test(f) || f.endsWith(".map") || f === "package-lock.json");
    expect(unwanted).toEqual([]);
  });

  it("every relative link in the shipped Markdown (README, docs/) leads to a shipped file and heading", () => {
    const root = join(project, "node_modules", "yiem");
    const shipped = new Set(packedFiles);
    const pages = packedFiles.filter((f) => f.endsWith(".md"));
    expect(pages).toEqual(expect.arrayContaining(["README.md", "docs/cli.md", "docs/tools.md"]));
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      const text = readFileSync(join(root, page), "utf8");
      for (const [, link] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
        const [file, anchor] = link.split("#");
        const target = file === "" ? page : posix.normalize(posix.join(posix.dirname(page), file)).replace(/\/$/, "");
        checked++;
        const isFolder = packedFiles.some((f) => f.startsWith(`${target}/`));
        if (!shipped.has(target) && !isFolder) broken.push(`${page}: ${link} (not in the package)`);
        else if (anchor && target.endsWith(".md") && !headingSlugs(readFileSync(join(root, target), "utf8")).includes(anchor)) {
          broken.push(`${page}: ${link} (no such heading)`);
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });

  // No repository/homepage yet: the project has no public address to name (see the session note).
  it("has a licence and no script that runs when it is installed", () => {
    const shipped = JSON.parse(readFileSync(join(project, "node_modules", "yiem", "package.json"), "utf8")) as {
      license?: string;
      scripts?: Record<string, string>;
    };
    expect(shipped.license).toBe("MIT");
    for (const script of ["preinstall", "install", "postinstall", "prepare"]) expect(shipped.scripts ?? {}, script).not.toHaveProperty(script);
    expect(readFileSync(join(project, "node_modules", "yiem", "LICENSE"), "utf8")).toMatch(/^MIT License/);
  });
});

describe("the installed package, in a new project", () => {
  it("installed offline with no build: no TypeScript, no install-script warning, dist shipped", () => {
    expect(existsSync(join(project, "node_modules", "typescript"))).toBe(false);
    expect(existsSync(join(project, "node_modules", "yiem", "dist", "cli", "main.js"))).toBe(true);
    expect(installLog).not.toMatch(/install scripts|prepare/i);
    expect(existsSync(join(project, "node_modules", "city-timezones"))).toBe(true);
  });

  it("runs init --example, tools list, tools call and the offline replay run", async () => {
    const version = await yiem(["--version"], project);
    expect(version.stdout).toBe(`${pkg.version}\n`);

    const init = await yiem(["init", "--example"], project);
    expect(init.code, init.stderr).toBe(0);
    for (const file of ["agent.config.yaml", "configs/demo.replay.jsonl", "tools/getTime.ts", "tools/getWeather.ts", "tools/_lib/cities.ts"]) {
      expect(existsSync(join(project, file)), file).toBe(true);
    }
    expect(init.stderr).toContain('yiem run -m replay:configs/demo.replay.jsonl "What time is it in Tokyo?"');
    expect(init.stderr).not.toContain("city-timezones");

    const list = await yiem(["tools", "list", "--json"], project);
    expect(list.code, list.stderr).toBe(0);
    const listed = JSON.parse(list.stdout) as { tools: Array<{ name: string }>; problems: unknown[] };
    expect(listed.tools.map((t) => t.name).sort()).toEqual(["getTime", "getWeather", "listTools"]);
    expect(listed.problems).toEqual([]);

    const call = await yiem(["tools", "call", "getTime", "--args", '{"city": "Tokyo"}', "--output", "json", "--events", "none"], project);
    expect(call.code, call.stderr).toBe(0);
    const result = JSON.parse(call.stdout) as { isError: boolean; details: { timezone: string } };
    expect(result.isError).toBe(false);
    expect(result.details.timezone).toBe("Asia/Tokyo");

    const answer = await yiem(["run", "-m", "replay:configs/demo.replay.jsonl", "What time is it in Tokyo?"], project);
    expect(answer.code, answer.stderr.slice(-2000)).toBe(0);
    const events = parseNdjson(answer.stderr);
    assertEventStream(events);
    expect(events[0]).toMatchObject({ type: "agentStart", configPath: join(project, "agent.config.yaml") });
    const ends = events.filter((e) => e.type === "toolExecutionEnd");
    expect(ends.map((e) => e.toolName).sort()).toEqual(["getTime", "listTools"]);
    expect(ends.every((e) => e.isError === false)).toBe(true);
    expect(answer.stdout).toMatch(/^According to the getTime tool, it is now: Tokyo, Japan \(Asia\/Tokyo\): .* \(UTC\+09:00\)\n$/);
  }, 60_000);

  it("init without --example writes a tool that imports \"yiem\" from the install", async () => {
    const dir = join(project, "minimal");
    const init = await yiem(["init", "--dir", "minimal"], project);
    expect(init.code, init.stderr).toBe(0);
    const spec = await readFile(join(dir, "agent.config.yaml"), "utf8");
    expect(spec).toContain("$schema=../node_modules/yiem/schema/agent.schema.json");
    expect(spec).toContain("Every key is described in ../node_modules/yiem/docs/spec.md.");
    const call = await yiem(["tools", "call", "countWords", "--args", '{"text": "one two three"}'], dir);
    expect(call.code, call.stderr).toBe(0);
    expect(call.stdout).toBe("3 words\n");
  }, 30_000);

  it("init in the project: $schema and docs paths are relative paths into node_modules/yiem that resolve; the hint runs the local bin", async () => {
    const dir = join(project, "demo2");
    const init = await yiem(["init", "--example", "--dir", "demo2"], project);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stderr).toContain('npx --no-install yiem run -m replay:configs/demo.replay.jsonl "What time is it in Tokyo?"');
    for (const file of ["agent.config.yaml", "configs/review.yaml", "configs/weather.yaml", "configs/scaffold.yaml"]) {
      const text = await readFile(join(dir, file), "utf8");
      const schema = /\$schema=(\S+)/.exec(text)?.[1] ?? "";
      expect(schema, file).toMatch(/^(\.\.\/)+node_modules\/yiem\/schema\/agent\.schema\.json$/);
      expect(existsSync(join(dir, posix.dirname(file), schema)), `${file}: ${schema}`).toBe(true);
      for (const [, doc] of text.matchAll(/^#.*?(\S*docs\/[\w-]+\.md)/gm)) expect(existsSync(join(dir, posix.dirname(file), doc)), `${file}: ${doc}`).toBe(true);
      expect(text, file).not.toMatch(/npx yiem/);
      const loaded = await yiem(["run", "--dry-run", "-c", file, "hi"], dir);
      expect(loaded.code, `${file}: ${loaded.stderr}`).toBe(0);
    }
    const plain = await readFile(join(project, "minimal", "agent.config.yaml"), "utf8").catch(() => "");
    if (plain) expect(existsSync(join(project, "minimal", /Every key is described in (\S+)\.\n/.exec(plain)![1]))).toBe(true);
    const missing = await yiem(["config", "-c", "configs/review.yaml"], join(project, "minimal"));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`the yiem package has an example of that name: ${join(project, "node_modules", "yiem", "configs", "review.yaml")}`);
  }, 60_000);

  it("init --example in a folder outside the project (as with a global install) runs the demo with yiem's own city-timezones", async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), "yiem-global-like-"));
    try {
      const init = await yiem(["init", "--example"], elsewhere);
      expect(init.code, init.stderr).toBe(0);
      expect(existsSync(join(elsewhere, "node_modules"))).toBe(false);
      const call = await yiem(["tools", "call", "getTime", "--args", '{"city": "Tokyo"}', "--output", "json"], elsewhere);
      expect(call.code, call.stderr).toBe(0);
      expect(JSON.parse(call.stdout).details).toMatchObject({ timezone: "Asia/Tokyo" });
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  }, 30_000);
});
