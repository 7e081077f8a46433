import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real processes and databases: separate forks. Every file works in its own SQLite directory or
    // PostgreSQL schema, and binds port 0, so files share nothing and may run side by side: one fork
    // more than the cores, since many files spend much of their time waiting on child processes
    // (vitest's default leaves one core idle). ORBIT_TEST_WORKERS overrides it (docs/testing.md).
    pool: "forks",
    maxWorkers: Number(process.env.ORBIT_TEST_WORKERS) || Math.max(2, availableParallelism()) + 1,
    // A fork keeps its modules from one file to the next instead of importing src/ again for every
    // file: a third less CPU for the suite. Safe because no test mocks modules or changes globals
    // it does not restore; ORBIT_TEST_ISOLATE=1 isolates every file again.
    isolate: process.env.ORBIT_TEST_ISOLATE === "1",
    // Child processes run a transpiled copy of the sources (test/helpers/child.ts).
    globalSetup: ["./test/support/child-build.ts", "./test/support/pg-schemas.ts"],
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
