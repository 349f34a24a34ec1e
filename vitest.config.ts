import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

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
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // One worker more than cores: most files wait on child processes and sockets, and vitest's
    // default (cores − 1, one worker on two cores) left the CPU idle half the time
    // (docs/performance.md, "The test suite").
    maxWorkers: availableParallelism() + 1,
    // Files share a worker process instead of a fresh one each (no new process and no second import
    // of the same modules per file); what a file changes of its process is put back after it
    // (test/support/process-state.ts).
    isolate: false,
    setupFiles: ["test/support/process-state.ts"],
    projects: [
      { extends: true, test: { name: "suite", exclude: TIMED, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "timed", include: TIMED, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
    // A skipped or focused test must never pass silently.
    allowOnly: false,
    passWithNoTests: false,
  },
});
