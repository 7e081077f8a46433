/**
 * Ends every run with one plain line, `tests: N passed, N failed, N skipped`, that CI reads, and
 * names the suites that skipped themselves (for instance the PostgreSQL suites on a machine
 * without ORBIT_TEST_DATABASE_URL) so a skip is never silent.
 */
import type { Reporter, TestModule } from "vitest/node";

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const skippedSuites = new Set<string>();
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else {
          skipped++;
          if (test.parent.type === "suite")
            skippedSuites.add(`${test.module.relativeModuleId} > ${test.parent.fullName}`);
          else skippedSuites.add(test.module.relativeModuleId);
        }
      }
    }
    if (skippedSuites.size > 0) {
      process.stdout.write(`\nSkipped tests, by suite:\n${[...skippedSuites].map((s) => `  - ${s}`).join("\n")}\n`);
    }
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
