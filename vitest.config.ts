import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * Test files at once. Vitest's default (cores - 1) is a single worker on a 2-core machine, while most end-to-end
 * and fault files spend their time waiting on child processes, not on the CPU: one more worker than cores keeps
 * both cores busy (measured in docs/testing.md). `VITEST_MAX_WORKERS` or `--maxWorkers` overrides it.
 */
export const MAX_WORKERS = Math.max(2, Math.min(4, availableParallelism() + 1));

/**
 * Files that start processes (the real `clawdis` binary, the fault scenarios). Not isolated either: their own
 * state is in the processes and temp directories they start, and each file's `afterAll` cleans up what it started
 * (test/e2e/harness.ts `cleanupAll`), so the files a worker runs share the harness, the fakes and the sources they
 * import (importing them again for each of ~60 files cost ~25 s of CPU, measured in docs/testing.md).
 */
export const PROCESS_FILES = ["test/e2e/**/*.test.ts", "test/fault/**/*.test.ts"];
/** Every test file; those not in PROCESS_FILES run in the test's own process (unit and in-process gateway tests). */
const ALL_FILES = ["src/**/*.test.ts", "plugins/**/*.test.ts", "test/**/*.test.ts"];
const NEVER = ["node_modules/**", "dist/**"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    maxWorkers: MAX_WORKERS,
    // End-to-end tests run the compiled binary; this builds dist/ when it is missing (`npm test` builds first).
    globalSetup: ["test/e2e/global-setup.ts"],
    projects: [
      // Not isolated: importing the sources again for each of ~200 files cost more time than the tests themselves
      // (measured in docs/testing.md). A test that changes module state (the log level, a clock) sets it itself.
      {
        extends: true,
        test: {
          name: "in-process",
          include: ALL_FILES,
          exclude: [...NEVER, ...PROCESS_FILES],
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: "processes", include: PROCESS_FILES, exclude: NEVER, isolate: false },
      },
    ],
  },
});
