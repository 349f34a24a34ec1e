/**
 * `npm test` (scripts/test.mjs) emits dist/ with `tsc --noCheck` and leaves the type checking of
 * src/ to the typecheck program: that loses no check only while tsconfig.check.json checks every
 * file the build compiles, with the build's options, loosening none.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (file: string) => JSON.parse(readFileSync(new URL(`../${file}`, import.meta.url), "utf8"));
const build = read("tsconfig.json");
const check = read("tsconfig.check.json");
const pkg = read("package.json");

/** What the typecheck program may set on top of the build's options: none of them turns a check off. */
const CHECK_ONLY_OPTIONS = ["noEmit", "rootDir", "allowImportingTsExtensions", "paths"];

describe("the typecheck program checks what the build emits without checking", () => {
  it("it extends the build's options and sets only options that turn no check off", () => {
    expect(check.extends).toBe("./tsconfig.json");
    expect(Object.keys(check.compilerOptions).filter((option) => !CHECK_ONLY_OPTIONS.includes(option))).toEqual([]);
  });

  it("it includes every folder the build compiles and excludes none of them", () => {
    for (const folder of build.include) expect(check.include).toContain(folder);
    for (const excluded of check.exclude ?? []) expect(build.include.some((folder: string) => excluded === folder || excluded.startsWith(`${folder}/`))).toBe(false);
  });

  it("npm test runs both steps, and the build script alone still type-checks", () => {
    const script = readFileSync(new URL("../scripts/test.mjs", import.meta.url), "utf8");
    expect(pkg.scripts.test).toBe("node scripts/test.mjs");
    expect(script).toContain('[tsc, "-p", "tsconfig.json", "--noCheck"]');
    expect(script).toContain('[tsc, "-p", "tsconfig.check.json"]');
    expect(pkg.scripts.build).not.toContain("--noCheck");
    expect(pkg.scripts.typecheck).toBe("tsc -p tsconfig.check.json");
  });
});
