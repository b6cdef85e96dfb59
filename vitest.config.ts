import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * Test files at once. Vitest's default (cores - 1) is a single worker on a 2-core machine, while most end-to-end
 * and fault files spend their time waiting on child processes, not on the CPU: one more worker than cores keeps
 * both cores busy (measured in docs/testing.md). `VITEST_MAX_WORKERS` or `--maxWorkers` overrides it.
 */
export const MAX_WORKERS = Math.max(2, Math.min(4, availableParallelism() + 1));

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "plugins/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["node_modules/**", "dist/**"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    maxWorkers: MAX_WORKERS,
    // End-to-end tests run the compiled binary; this builds dist/ when it is missing (`npm test` builds first).
    globalSetup: ["test/e2e/global-setup.ts"],
  },
});
