/**
 * The tool policy: which tools a run may offer and call. Rules:
 * - `allow` and `deny` are lists of name globs; an entry may hold several, comma-separated;
 * - globs: `*` any run of characters, `?` one character, `[abc]` / `[a-z]` / `[!abc]` a class;
 *   every other character matches itself; matching is case-sensitive and whole-name;
 * - a tool is allowed when some allow glob matches and no deny glob does (deny wins);
 *   an empty allow list allows nothing.
 */

/** `(name) => allowed`; defaults allow everything. */
export function createToolPolicy(allow: string[] = ["*"], deny: string[] = []): (name: string) => boolean {
  const allowed = splitGlobs(allow).map(globToRegExp);
  const denied = splitGlobs(deny).map(globToRegExp);
  return (name: string) => allowed.some((re) => re.test(name)) && !denied.some((re) => re.test(name));
}

/** Whether `name` matches the glob `pattern`. */
export function matchesGlob(pattern: string, name: string): boolean {
  return globToRegExp(pattern).test(name);
}

function splitGlobs(list: string[]): string[] {
  return list.flatMap((entry) => entry.split(",")).map((g) => g.trim()).filter((g) => g !== "");
}

/** Compiles a glob to an anchored RegExp. An unclosed `[` matches itself. */
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
