/**
 * Where `yiem init` finds this package's files from the folder it writes into, so that what it
 * writes resolves there. Rules:
 * - a project install: the package is `node_modules/yiem` of the folder or one above it; paths
 *   are relative to the file that names them (`node_modules/yiem/schema/agent.schema.json` in
 *   D/agent.config.yaml, `../node_modules/yiem/…` in D/configs/x.yaml), the command is
 *   `npx --no-install yiem` (never one that could fetch another package from the registry);
 * - anything else (a global install, a clone): absolute paths, the command is `yiem`;
 * - `adapt` rewrites a copied example file: its `$schema=` line and `docs/…md` mentions point at
 *   the package's files, and its `npx yiem` / `yiem run` commands use the command above.
 */
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { packageRoot } from "../../package-info.js";

export interface InstallPaths {
  /** `path` (relative to the package root) as the target folder's agent.config.yaml names it. */
  file(path: string): string;
  /** The command that runs yiem there. */
  command: string;
  /** `text` of the package file `path`, copied to the same path under the target folder, with its references fixed. */
  adapt(path: string, text: string): string;
}

export function installPaths(dir: string, root: string = packageRoot()): InstallPaths {
  const projectRoot = dirname(dirname(root));
  const fromProject = relative(projectRoot, dir);
  const local = dirname(root).split(sep).pop() === "node_modules" && !fromProject.startsWith("..") && !isAbsolute(fromProject);
  const command = local ? "npx --no-install yiem" : "yiem";
  /** `path` of the package as named from the folder `from`. */
  const refer = (from: string, path: string) => {
    const target = join(root, path);
    if (!local) return target;
    const rel = relative(from, target).split(sep).join("/");
    return rel;
  };
  return {
    command,
    file: (path) => refer(dir, path),
    adapt(path, text) {
      if (!/\.ya?ml$/.test(path)) return text;
      const from = join(dir, dirname(path));
      return text
        .replace(/\$schema=\S*agent\.schema\.json/, `$schema=${refer(from, "schema/agent.schema.json")}`)
        .replace(/(^#.*?)\b(docs\/[\w-]+\.md)/gm, (_, head: string, doc: string) => `${head}${refer(from, doc)}`)
        .replace(/^(#.*?)\bnpx yiem\b/gm, `$1${command}`)
        .replace(/^(#.*?)(?<![\w-])yiem run\b/gm, (match, head: string) => (match.includes("npx") ? match : `${head}${command} run`));
    },
  };
}
