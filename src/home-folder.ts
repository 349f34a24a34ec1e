/**
 * The home folder of a caller's environment. Rules:
 * - `HOME` of the environment given (on Windows `USERPROFILE` too), never the process's own, so
 *   a CLI call (`main(argv, io)`) goes by `io.env`;
 * - with neither set, the current user's home from the system's user database; "" when that
 *   cannot be read either (then nothing is taken to be the home folder).
 */
import { userInfo } from "node:os";

export function homeFolder(env: NodeJS.ProcessEnv): string {
  const fromEnv = env.HOME || (process.platform === "win32" ? env.USERPROFILE : undefined);
  if (fromEnv) return fromEnv;
  try {
    return userInfo().homedir;
  } catch {
    return "";
  }
}
