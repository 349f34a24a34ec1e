/**
 * Name glob lists, the one syntax for every list that picks names: the spec's `tools.allow` /
 * `tools.deny`, `--allow-tools` / `--deny-tools`, and an MCP server's `tools.allow` / `tools.deny`.
 * Rules:
 * - a list holds entries; an entry may hold several globs, comma-separated; blanks around a glob
 *   are dropped, and so are empty globs;
 * - `*` any run of characters (none too), `?` one character, `[abc]` / `[a-z]` / `[!abc]` (or
 *   `[^abc]`) one character of a class; an unclosed `[` matches itself; every other character
 *   matches itself; matching is case-sensitive and whole-name;
 * - a list matches a name when any of its globs does; an empty list matches nothing.
 */

/** The globs of `list`: entries split at commas, trimmed, empty ones dropped (order kept). */
export function splitGlobList(list: readonly string[]): string[] {
  return list.flatMap((entry) => entry.split(",")).map((glob) => glob.trim()).filter((glob) => glob !== "");
}

/** `(name) => whether some glob of list matches it`. */
export function globListMatcher(list: readonly string[]): (name: string) => boolean {
  const patterns = splitGlobList(list).map(globToRegExp);
  return (name) => patterns.some((re) => re.test(name));
}

/** Whether `name` matches the one glob `glob`. */
export function matchesGlob(glob: string, name: string): boolean {
  return globToRegExp(glob).test(name);
}

/** Whether `glob` has a wildcard (`*`, `?`, `[`), i.e. is more than one literal name. */
export function hasWildcard(glob: string): boolean {
  return /[*?[]/.test(glob);
}

/** Compiles one glob to an anchored RegExp. */
export function globToRegExp(glob: string): RegExp {
  let source = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*") source += "[^]*";
    else if (c === "?") source += "[^]";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end < 0) {
        source += "\\[";
        continue;
      }
      let body = glob.slice(i + 1, end);
      const negate = body.startsWith("!") || body.startsWith("^");
      if (negate) body = body.slice(1);
      source += `[${negate ? "^" : ""}${body.replace(/[\\\]^]/g, "\\$&")}]`;
      i = end;
    } else source += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  }
  return new RegExp(`^${source}$`, "u");
}
