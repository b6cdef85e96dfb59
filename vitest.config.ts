import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "plugins/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["node_modules/**", "dist/**"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // End-to-end tests run the compiled binary; this builds dist/ when it is missing (`npm test` builds first).
    globalSetup: ["test/e2e/global-setup.ts"],
  },
});
