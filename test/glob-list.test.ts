/** Name glob lists (src/glob-list.ts): the one syntax of tools.allow/deny, the flags and MCP server filters. */
import { describe, expect, it } from "vitest";
import { globListMatcher, globToRegExp, hasWildcard, matchesGlob, splitGlobList } from "../src/glob-list.js";

describe("glob matching", () => {
  it.each([
    ["*", "anything", true],
    ["*", "", true],
    ["get*", "getWeather", true],
    ["get*", "forget", false],
    ["*File", "readFile", true],
    ["*File", "readFiles", false],
    ["read?ile", "readFile", true],
    ["read?ile", "readfile", true],
    ["read?ile", "readile", false],
    ["[rw]*", "writeTool", true],
    ["[rw]*", "listTools", false],
    ["[a-c]x", "bx", true],
    ["[!a-c]x", "bx", false],
    ["[!a-c]x", "dx", true],
    ["listTools", "listTools", true],
    ["listTools", "listtools", false],
    ["a.b", "a.b", true],
    ["a.b", "axb", false],
    ["x+(y)", "x+(y)", true],
    ["[unclosed", "[unclosed", true],
  ])("%s against %s is %s", (glob, name, expected) => {
    expect(matchesGlob(glob, name)).toBe(expected);
  });

  it("compiles to an anchored expression", () => {
    expect(globToRegExp("a*").test("ba")).toBe(false);
  });
});

describe("glob lists", () => {
  it("split at commas, trimmed, empty globs dropped, order kept", () => {
    expect(splitGlobList(["getTime, getWeather", "", " read* ,,", "x"])).toEqual(["getTime", "getWeather", "read*", "x"]);
    expect(splitGlobList([])).toEqual([]);
  });

  it("a list matches when any of its globs does; an empty list matches nothing", () => {
    const matches = globListMatcher(["get*, listTools", "[rw]?ite*"]);
    expect(["getTime", "listTools", "writeTool", "rxiteX"].filter(matches)).toEqual(["getTime", "listTools", "writeTool", "rxiteX"]);
    expect(matches("forget")).toBe(false);
    expect(globListMatcher([])("anything")).toBe(false);
    expect(globListMatcher([" , "])("anything")).toBe(false);
  });

  it("a glob with a wildcard is told from a literal name", () => {
    expect(["*", "a?", "[ab]", "plain", "dotted.name"].map(hasWildcard)).toEqual([true, true, true, false, false]);
  });
});
