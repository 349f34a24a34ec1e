import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * Files whose tests bound a duration (the linear-time parsers and sanitiser): they run after all the
 * others, one at a time, so the other files' processes do not share the CPU with them.
 */
const TIMED = [
  "test/cli/reliability/output-channels.test.ts",
  "test/cli/reliability/text-tool-calls.test.ts",
  "test/provider/compat/sse-linear.test.ts",
];

export default defineConfig({
  resolve: {
    alias: { yiem: fileURLToPath(new URL("./src/index.ts", import.meta.url)) },
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Test files share worker processes (the "suite" project): each file no longer starts a
    // process and imports the sources again. What a file may change in its process (environment,
    // working folder, timers) is put back before and after every file by the setup file.
    setupFiles: ["test/support/setup-file.ts"],
    // One worker more than cores: most files wait on child processes and sockets, and vitest's
    // default (cores − 1, one worker on two cores) left the CPU idle half the time
    // (docs/performance.md, "The test suite's wall time").
    maxWorkers: availableParallelism() + 1,
    projects: [
      // `include` and `exclude` are the projects' own: set at the top level, a project would add to them.
      { extends: true, test: { name: "suite", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, ...TIMED], isolate: false, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "timed", include: TIMED, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
    // A skipped or focused test must never pass silently.
    allowOnly: false,
    passWithNoTests: false,
  },
});
