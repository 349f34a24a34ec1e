/**
 * How the benchmarks call yiem: `node bin/yiem.js …` of this checkout (dist/ must be built: the
 * CLI runs from dist/bundle/), in a
 * clean environment (no model, base URL or key from the caller's shell, since those would
 * override the specs), with the transpile cache in the benchmark's own folder.
 */
import { fileURLToPath } from "node:url";
import { existsSync, readFileSync } from "node:fs";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
export const BIN = fileURLToPath(new URL("../../bin/yiem.js", import.meta.url));
export const NODE = process.execPath;

export function assertBuilt() {
  if (!existsSync(fileURLToPath(new URL("../../dist/bundle/yiem.cjs", import.meta.url)))) {
    throw new Error("dist/ is missing: run `npm run build` first");
  }
}

/** Environment overrides for a yiem child: cache folder, a dummy key, no inherited model settings. */
export function yiemEnv(cacheDir, extra = {}) {
  return {
    YIEM_CACHE_DIR: cacheDir,
    OPENAI_API_KEY: "bench-key",
    OPENAI_BASE_URL: undefined,
    YIEM_MODEL: undefined,
    NO_COLOR: "1",
    ...extra,
  };
}

export const yiem = (...args) => [NODE, BIN, ...args];

/** The last NDJSON line of a run's stderr, parsed: its agentEnd event. */
export function agentEndOf(stderr) {
  const lines = stderr.trimEnd().split("\n");
  const last = JSON.parse(lines[lines.length - 1]);
  if (last.type !== "agentEnd") throw new Error(`last event is ${last.type}, not agentEnd`);
  return last;
}

export function readText(file) {
  return readFileSync(file, "utf8");
}
