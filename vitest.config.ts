import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real processes and databases: separate forks, one per core.
    pool: "forks",
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
